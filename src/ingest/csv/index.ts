/** CSV files -> a staged DuckDB table (see csv-reader.ts). */
export { stageCsv, type CsvOptions } from './csv-reader.ts';

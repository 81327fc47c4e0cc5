/** Parquet files -> a staged DuckDB table (see parquet-reader.ts). */
export { stageParquet, type ParquetOptions } from './parquet-reader.ts';

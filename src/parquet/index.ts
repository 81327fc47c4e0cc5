/** ColumnBatches -> DuckDB tables -> time-sorted Parquet files per UTC hour; Parquet footer reading. */
export { loadBatchesIntoTable, quoteIdent, type LoadOptions, type LoadedTable } from './table-loader.ts';
export { writeHourFiles, copyTableToParquet, type ParquetCompression, type WrittenFile, type WriteFilesOptions } from './parquet-writer.ts';
export { hourLayout, type HourPart, type TimeLayout } from './hour-layout.ts';
export { unionSchema, widen, compatible, type SchemaColumn } from './schema.ts';
export { readParquetSummary, type ParquetSummary } from './footer.ts';
export { writeResultParquet, type ResultFileColumn } from './result-file.ts';

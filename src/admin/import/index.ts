/** Bulk imports: upload -> staged tables -> hourly Parquet files, all or nothing per request. */
export { IMPORT_MAX_BYTES, ImportService, type ImportDeps, type ImportFormatOptions, type ImportRequest } from './import-service.ts';
export { rfc3339Micros, type ImportResult } from './import-result.ts';

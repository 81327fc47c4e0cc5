/** The query engine: SQL over the Parquet files and buffered rows, SHOW statements, result encoders. */
export { QueryService, type QueryServiceOptions, type QueryRequest, type QueryOutcome } from './query-service.ts';
export { ManifestTableSource, type TableSource, type SourceFile, type BufferedRows } from './table-source.ts';
export type { QueryProfile, ChunkEncoder } from './execution.ts';
export { streamQuery, type Emit, type StreamEncoder, type ResultMeta, type QueryBody, type StreamOptions } from './result-stream.ts';
export { WholeBodies } from './whole-body.ts';
export { INTERNAL_ORIGIN, type QueryGate, type QueryAdmission, type QueryOrigin, type StopReason } from './query-gate.ts';
export type { QueryEstimate, RefEstimate } from './estimate.ts';
export { JsonEncoder } from './encode/json-encoder.ts';
export { renderFloatsAsJson } from './encode/json-render.ts';
export { ArrowEncoder } from './encode/arrow-encoder.ts';
export { MsgpackEncoder } from './encode/msgpack-encoder.ts';
export type { ResultColumn } from './encode/result.ts';
export { exportQuery, tableToCsv, EXPORT_FORMATS, EXPORT_MAX_BYTES, type ExportFormat, type ExportedFile } from './export.ts';
export type { QuerySession, BoundParam } from './sql/session.ts';
export { pgTypeOf } from './catalog-tables.ts';

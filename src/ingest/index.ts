/** Public face of ingest: the ColumnBatch contract, body decompression and the pure format parsers. */
export { type Column, type ColumnBatch, type ColumnType, hourOf, MICROS_PER_HOUR } from './column-batch.ts';
export { type Compression, decompress, detectCompression } from './decompress.ts';
export {
  isPrecision,
  type LineError,
  type LineProtocolOptions,
  type LineProtocolResult,
  MAX_LINE_ERRORS,
  parseLineProtocol,
  type Precision,
  PRECISIONS,
} from './lineprotocol/index.ts';
export { type MsgpackWriteOptions, parseMsgpackWrite } from './msgpack/index.ts';

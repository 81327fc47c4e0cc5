/** Public face of ingest: the ColumnBatch contract, body decompression and the pure format parsers. */
export { type Column, type ColumnBatch, type ColumnType, dictionaryColumn, hourOf, MICROS_PER_HOUR, type StringDictionary } from './column-batch.ts';
export { fromWire, toWire, type WireBatches } from './batch-wire.ts';
export { type Compression, decompress, detectCompression, inflateStream } from './decompress.ts';
export { zstdFramesProblem } from './zstd-frames.ts';
export {
  encodeLineProtocol,
  isPrecision,
  type LineError,
  type LineProtocolOptions,
  type LineProtocolResult,
  MAX_LINE_ERRORS,
  parseLineProtocol,
  type Precision,
  PRECISIONS,
} from './lineprotocol/index.ts';
export { MIN_OFFLOAD_BYTES, ParsePool } from './parse-pool/index.ts';
export { type MsgpackWriteOptions, parseMsgpackWrite } from './msgpack/index.ts';
export { lineChunks, multipartBoundary, spoolToFile, type LineChunk, type SpoolOptions, type SpoolResult } from './upload/index.ts';
export { stageCsv, type CsvOptions } from './csv/index.ts';
export { stageParquet, type ParquetOptions } from './parquet-import/index.ts';
export { MAX_TIME_MICROS, TIME_FORMATS, type StagedColumn, type StagedTable, type TimeFormat } from './import-table/index.ts';
export { MAX_TLE_ERRORS, parseTle, TLE_COLUMNS, tleChecksum, TleParser, type TleError, type TleResult } from './tle/index.ts';
export { decodeRemoteWrite, decodeRemoteWriteV2, parseRemoteWrite, parseRemoteWriteV2, uncompressSnappy, type RemoteWriteResult, type RemoteWriteV2Result } from './prom/index.ts';
export { columnMemory, type ColumnMemoryStats, type MemoryClaim } from './column-memory.ts';
export { batchBytes } from './column-bytes.ts';

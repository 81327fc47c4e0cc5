/** Messages between the flush queue's writers (file-writers.ts) and a flush worker (flush-worker.ts). */
import type { WireBatches } from '../ingest/index.ts';
import type { ParquetCompression, WrittenFile } from '../parquet/index.ts';

/**
 * A write request: rows of one measurement, the codec, the scratch path prefix for its hour files, and
 * whether to fsync each file and drop it from the page cache before answering.
 */
export interface FlushRequest {
  id: number;
  batches: WireBatches;
  compression: ParquetCompression;
  scratchPrefix: string;
  settle: boolean;
}

/** Asks a worker to close its DuckDB and answer `closed` (terminating it mid-call would abort the process). */
export interface CloseRequest {
  close: true;
}

/**
 * The first message (`ready`, with the worker thread's kernel id for its priority, or why DuckDB could
 * not open), then one answer per request, and `closed` last.
 */
export type FlushReply =
  | { ready: true; tid: number | null }
  | { ready: false; error: string }
  | { id: number; files: WrittenFile[] }
  | { id: number; error: string }
  | { closed: true };

/** The scratch path of hour `hour`'s file of a request (every writer names files the same way). */
export const scratchFileFor = (prefix: string, hour: number) => `${prefix}-${hour}.parquet`;

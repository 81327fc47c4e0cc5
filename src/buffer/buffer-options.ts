/** The settings, collaborators and figures of a BufferSet (buffer-set.ts). */
import type { DuckDBInstance } from '../duckdb/index.ts';
import type { FileManifestStore } from '../catalog/index.ts';
import type { Logger, SvcMetrics } from '../observability/index.ts';
import type { ParquetCompression } from '../parquet/index.ts';
import type { ObjectStore } from '../storage/index.ts';

/** The `ingest.*` settings that shape buffering, plus how long a write may wait for queue room. */
export interface BufferOptions {
  maxBufferSize: number;
  maxBufferAgeMs: number;
  flushWorkers: number;
  flushQueueSize: number;
  compression: ParquetCompression;
  admissionTimeoutMs: number;
  /** While flushes fail, rows held (buffered + in flight) past this refuse new writes with 503 (ingest.max_buffer_size x shard_count). */
  maxHeldRecords?: number;
  /**
   * Column memory (estimated, see ingest/column-bytes.ts) buffers and flushes in flight may hold
   * together (ingest.max_buffered_size); at it, writes get 503. A buffer past a quarter of it is flushed. Absent: no bound.
   */
  maxBufferedBytes?: number;
  /** Failures blaming the rows before a flush's rows are set aside (ingest.flush_max_attempts; default 3). */
  flushMaxAttempts?: number;
  /** Folder of set-aside rows (ingest.set_aside_path); absent: failing flushes are retried forever. */
  setAsideDir?: string;
  /** Flush in Bun Workers (default); false: DuckDB connections on this thread. */
  workerThreads?: boolean;
  /** Nice steps the flush worker threads run below the event loop (ingest.flush_worker_nice; default 0). */
  flushWorkerNice?: number;
  /** Flush workers fsync their files and drop them from the page cache (local storage with storage.drop_page_cache). */
  settleFilesInWorkers?: boolean;
}

/** Collaborators, built by main.ts. `onRelease` receives WAL tickets whose rows are all in registered files. */
export interface BufferDeps {
  instance: DuckDBInstance;
  store: ObjectStore;
  manifest: FileManifestStore;
  metrics: SvcMetrics;
  logger: Logger;
  onRelease?: (ticket: unknown) => void;
}

/** Counters for the stats endpoints. */
export interface BufferStats {
  buffered_records: number;
  buffers: number;
  in_flight_jobs: number;
  in_flight_records: number;
  queue_depth: number;
  flushing: number;
  flushes: number;
  records_written: number;
  flush_failures: number;
  last_flush_at: string | null;
  last_error: string | null;
  /** The latest flush attempt failed (rows kept and retried). */
  failing: boolean;
  /** Estimated column memory of the buffered rows and of the rows in flight (see ingest/column-bytes.ts). */
  buffered_bytes: number;
  in_flight_bytes: number;
  /** ingest.max_buffered_size: buffered + in-flight bytes at which writes get 503 (null: no bound). */
  max_buffered_bytes: number | null;
  /** Flushes whose rows were set aside on disk (ingest.set_aside_path), and their rows. */
  set_aside_batches: number;
  set_aside_records: number;
}

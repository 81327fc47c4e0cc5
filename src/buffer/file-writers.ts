/**
 * The flush runners behind the queue: each turns sealed rows into hourly Parquet files at scratch
 * paths. Normally one Bun Worker each (flush-worker.ts); when Workers cannot start (a platform or
 * sandbox without them), DuckDB connections on this thread do the same job, only slower.
 */
import type { DuckDBConnection, DuckDBInstance } from '../duckdb/index.ts';
import { type ColumnBatch, toWire } from '../ingest/index.ts';
import { lowerThreadPriority } from '../lib/thread-priority.ts';
import { workerUrl } from '../lib/worker-url.ts';
import type { Logger } from '../observability/index.ts';
import { writeHourFiles, type ParquetCompression, type WrittenFile } from '../parquet/index.ts';
import { type CloseRequest, type FlushReply, type FlushRequest, scratchFileFor } from './flush-protocol.ts';

/** Writes rows of one measurement as one file per UTC hour at `scratchPrefix`-derived paths. */
export interface HourFileWriter {
  write(batches: readonly ColumnBatch[], compression: ParquetCompression, scratchPrefix: string): Promise<WrittenFile[]>;
  close(): Promise<void>;
}

/** How flush worker threads run (ingest.flush_worker_nice; see lib/thread-priority.ts and flush-worker.ts). */
export interface WorkerOptions {
  /** Nice steps the worker threads run below the event loop (0: at its priority). */
  niceSteps: number;
  /** Sync each written file and drop it from the page cache in the worker (local storage that drops pages). */
  settleFiles: boolean;
}

const READY_TIMEOUT_MS = 30_000;
const CLOSE_TIMEOUT_MS = 10_000;

/**
 * A flush worker thread, started by the first write: starting two Workers, each loading DuckDB, while the
 * server starts added ~40 ms to start-up on 2 cores, and the first flush waits for it instead. A crashed worker
 * is replaced on the next write (its job fails and is retried); when a worker cannot start at all, the
 * writer switches for good to `fallback` (logged once).
 */
class WorkerFileWriter implements HourFileWriter {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private replacement: HourFileWriter | null = null;
  private readonly pending = new Map<number, { resolve: (files: WrittenFile[]) => void; reject: (err: Error) => void }>();
  private nextId = 1;
  private onClosed: (() => void) | null = null;

  constructor(
    private readonly fallback: () => Promise<HourFileWriter>,
    private readonly logger: Logger,
    private readonly opts: WorkerOptions,
  ) {}

  async write(batches: readonly ColumnBatch[], compression: ParquetCompression, scratchPrefix: string): Promise<WrittenFile[]> {
    if (this.replacement) return this.replacement.write(batches, compression, scratchPrefix);
    try {
      await (this.worker ? this.ready : this.start());
    } catch (err) {
      this.logger.warn('a flush worker cannot start; flushing on the main thread instead', { error: err instanceof Error ? err.message : String(err) });
      this.replacement ??= await this.fallback();
      return this.replacement.write(batches, compression, scratchPrefix);
    }
    const worker = this.worker!;
    const { batches: wire, transfer } = toWire(batches);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, batches: wire, compression, scratchPrefix, settle: this.opts.settleFiles } satisfies FlushRequest, transfer);
    });
  }

  /** Lets the worker close its DuckDB first: a DuckDB call still running when a worker is terminated aborts the process. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) {
      const started = await this.ready?.then(
        () => true,
        () => false,
      );
      if (started) {
        const closed = new Promise<void>((resolve) => (this.onClosed = resolve));
        worker.postMessage({ close: true } satisfies CloseRequest);
        await Promise.race([closed, Bun.sleep(CLOSE_TIMEOUT_MS)]);
      }
      await worker.terminate();
    }
    await this.replacement?.close();
  }

  /** Starts the worker; resolves once its DuckDB is open. */
  private start(): Promise<void> {
    const worker = new Worker(workerUrl('buffer/flush-worker.ts'));
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('flush worker did not start in time')), READY_TIMEOUT_MS);
      worker.onmessage = (e: MessageEvent<FlushReply>) => {
        const m = e.data;
        if ('ready' in m) {
          clearTimeout(timer);
          if (m.ready) this.lowerPriority(m.tid);
          return m.ready ? resolve() : reject(new Error(`flush worker cannot open DuckDB: ${m.error}`));
        }
        if ('closed' in m) return this.onClosed?.();
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        if ('files' in m) p?.resolve(m.files);
        else p?.reject(new Error(m.error));
      };
      worker.onerror = (e) => {
        clearTimeout(timer);
        this.lost(worker, `flush worker failed: ${e.message}`);
        reject(new Error(`flush worker failed: ${e.message}`));
      };
    });
    return this.ready;
  }

  /** Lowers the worker thread's priority (see lib/thread-priority.ts); where that fails it runs on, logged. */
  private lowerPriority(tid: number | null): void {
    if (this.opts.niceSteps === 0) return;
    const problem = tid === null ? 'the worker thread id is unknown' : lowerThreadPriority(tid, this.opts.niceSteps);
    if (problem !== null) this.logger.warn('cannot lower the priority of a flush worker; it runs at the priority of the event loop', { error: problem });
  }

  /** Fails what the dead worker held; the next write starts a new one. */
  private lost(worker: Worker, message: string): void {
    if (this.worker === worker) this.worker = null;
    for (const p of this.pending.values()) p.reject(new Error(message));
    this.pending.clear();
    void worker.terminate();
  }
}

/** A DuckDB connection writing files from the thread it lives on: a flush worker's, or the main thread's as the fallback. */
export class ConnectionFileWriter implements HourFileWriter {
  constructor(
    private readonly conn: DuckDBConnection,
    private readonly table: string,
  ) {}

  write(batches: readonly ColumnBatch[], compression: ParquetCompression, scratchPrefix: string): Promise<WrittenFile[]> {
    return writeHourFiles(this.conn, batches, { compression, table: this.table, pathFor: (hour) => scratchFileFor(scratchPrefix, hour) });
  }

  async close(): Promise<void> {
    this.conn.closeSync();
  }
}

/** `count` runners: Workers run as `workers` says (falling back to connections of `instance` where they cannot start), or connections. */
export async function openFileWriters(count: number, instance: DuckDBInstance, logger: Logger, workers: WorkerOptions | null): Promise<HourFileWriter[]> {
  const connectionWriter = async (i: number) => {
    const conn = await instance.connect();
    // Each flush runs on its own connection's thread; DuckDB's extra threads only add contention (2 cores).
    await conn.run('SET threads = 1');
    return new ConnectionFileWriter(conn, `svc_flush_${i}`);
  };
  if (workers) return Array.from({ length: count }, (_, i) => new WorkerFileWriter(() => connectionWriter(i), logger, workers));
  return Promise.all(Array.from({ length: count }, (_, i) => connectionWriter(i)));
}

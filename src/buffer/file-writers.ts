/**
 * The flush runners behind the queue: each turns sealed rows into hourly Parquet files at scratch
 * paths. Normally one Bun Worker each (flush-worker.ts); when Workers cannot start (a platform or
 * sandbox without them), DuckDB connections on this thread do the same job, only slower.
 */
import type { DuckDBConnection, DuckDBInstance } from '../duckdb/index.ts';
import { type ColumnBatch, toWire } from '../ingest/index.ts';
import { workerUrl } from '../lib/worker-url.ts';
import type { Logger } from '../observability/index.ts';
import { writeHourFiles, type ParquetCompression, type WrittenFile } from '../parquet/index.ts';
import { type FlushReply, type FlushRequest, scratchFileFor } from './flush-protocol.ts';

/** Writes rows of one measurement as one file per UTC hour at `scratchPrefix`-derived paths. */
export interface HourFileWriter {
  write(batches: readonly ColumnBatch[], compression: ParquetCompression, scratchPrefix: string): Promise<WrittenFile[]>;
  close(): Promise<void>;
}

const READY_TIMEOUT_MS = 30_000;

/** A flush worker thread; a crashed one is replaced on the next write (its job fails and is retried). */
class WorkerFileWriter implements HourFileWriter {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private readonly pending = new Map<number, { resolve: (files: WrittenFile[]) => void; reject: (err: Error) => void }>();
  private nextId = 1;

  /** Starts the worker; resolves once its DuckDB is open. */
  start(): Promise<void> {
    const worker = new Worker(workerUrl('buffer/flush-worker.ts'));
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('flush worker did not start in time')), READY_TIMEOUT_MS);
      worker.onmessage = (e: MessageEvent<FlushReply>) => {
        const m = e.data;
        if ('ready' in m) {
          clearTimeout(timer);
          return m.ready ? resolve() : reject(new Error(`flush worker cannot open DuckDB: ${m.error}`));
        }
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

  async write(batches: readonly ColumnBatch[], compression: ParquetCompression, scratchPrefix: string): Promise<WrittenFile[]> {
    if (!this.worker) await this.start();
    else await this.ready;
    const worker = this.worker!;
    const { batches: wire, transfer } = toWire(batches);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, batches: wire, compression, scratchPrefix } satisfies FlushRequest, transfer);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }

  /** Fails what the dead worker held; the next write starts a new one. */
  private lost(worker: Worker, message: string): void {
    if (this.worker === worker) this.worker = null;
    for (const p of this.pending.values()) p.reject(new Error(message));
    this.pending.clear();
    void worker.terminate();
  }
}

/** The fallback: a DuckDB connection of `instance`, driven from this thread. */
class ConnectionFileWriter implements HourFileWriter {
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

/** `count` runners: Workers when they start, else connections of `instance` (logged once). */
export async function openFileWriters(count: number, instance: DuckDBInstance, logger: Logger, useWorkers = true): Promise<HourFileWriter[]> {
  if (useWorkers) {
    const writers = Array.from({ length: count }, () => new WorkerFileWriter());
    try {
      await Promise.all(writers.map((w) => w.start()));
      return writers;
    } catch (err) {
      await Promise.all(writers.map((w) => w.close().catch(() => undefined)));
      logger.warn('flush workers cannot start; flushing on the main thread instead', { error: err instanceof Error ? err.message : String(err) });
    }
  }
  const connections = await Promise.all(Array.from({ length: count }, () => instance.connect()));
  // Each flush runs on its own connection's thread; DuckDB's extra threads only add contention (2 cores).
  await connections[0]?.run('SET threads = 1');
  return connections.map((c, i) => new ConnectionFileWriter(c, `svc_flush_${i}`));
}

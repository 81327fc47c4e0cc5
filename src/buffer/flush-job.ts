/** A sealed buffer on its way to Parquet, and the code that writes one. */
import { rm } from 'node:fs/promises';
import type { FileManifestStore, ManifestFile } from '../catalog/index.ts';
import type { ColumnBatch, MemoryClaim } from '../ingest/index.ts';
import type { ParquetCompression, WrittenFile } from '../parquet/index.ts';
import { dataFileKey, type ObjectStore } from '../storage/index.ts';
import type { HourFileWriter } from './file-writers.ts';
import type { MeasurementBuffer } from './measurement-buffer.ts';

/** Rows sealed for one flush. `seq` is reserved at seal time, so flush order = write order (last-write-wins). */
export interface FlushJob {
  database: string;
  measurement: string;
  batches: ColumnBatch[];
  rows: number;
  tickets: unknown[];
  /** The batches' claimed column memory (see ingest/column-memory.ts), one entry per batch. */
  memory: MemoryClaim[];
  seq: number;
  /** Estimated bytes of the rows' columns (see ingest/column-bytes.ts), held against ingest.max_buffered_size. */
  bytes: number;
  attempts: number;
  /** Failed attempts that blame the rows (see set-aside.ts); at ingest.flush_max_attempts the rows are set aside. */
  rowFailures: number;
  /** Dropped unflushed (a fenced ex-primary's rows, replayed by the new primary): no further attempt. */
  abandoned?: boolean;
  /** Resolves once the rows are in registered files. */
  done: Promise<void>;
  resolve: () => void;
}

/** Seals rows into a job, reserving its flush sequence from the manifest. */
export function sealJob(manifest: FileManifestStore, buf: MeasurementBuffer): FlushJob {
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  const { database, measurement, batches, rows, memory, bytes } = buf;
  return { database, measurement, batches, rows, tickets: [...buf.tickets], memory, seq: manifest.nextSeq(), bytes, attempts: 0, rowFailures: 0, done, resolve };
}

/** Writes a job's rows as one Parquet file per UTC hour at scratch paths (the flush worker's part). */
export function writeJobFiles(writer: HourFileWriter, store: ObjectStore, job: FlushJob, compression: ParquetCompression): Promise<WrittenFile[]> {
  return writer.write(job.batches, compression, store.scratchPath(`flush-${job.seq}`));
}

/**
 * Puts a job's written files into the store under their final keys. Returns the manifest entries;
 * registering them is the caller's (synchronous) step. On failure nothing is left under a final key
 * and the scratch files are removed, so a retry cannot produce duplicates.
 */
export async function putJobFiles(store: ObjectStore, manifest: FileManifestStore, job: FlushJob, written: readonly WrittenFile[]): Promise<ManifestFile[]> {
  const out: ManifestFile[] = [];
  const createdAt = new Date().toISOString();
  try {
    for (const f of written) {
      const key = dataFileKey(job.database, job.measurement, f.hour);
      // Tickets mean the WAL holds these rows until they are registered, so a crash replays them.
      manifest.intend(key, job.tickets.length > 0 ? 'drop' : 'keep');
      const info = await store.put(key, { file: f.path, synced: f.synced === true });
      out.push({
        path: key,
        database: job.database,
        measurement: job.measurement,
        hour: f.hour,
        minTime: f.minTime,
        maxTime: f.maxTime,
        rows: f.rows,
        bytes: info.bytes,
        columns: f.columns,
        seq: job.seq,
        createdAt,
      });
    }
  } catch (err) {
    await Promise.all(out.map((f) => store.delete(f.path).catch(() => false)));
    for (const f of out) manifest.clearPending(f.path);
    await Promise.all(written.slice(out.length).map((f) => rm(f.path, { force: true }).catch(() => undefined)));
    throw err;
  }
  return out;
}

/** True once every job's rows are in registered files (or set aside), false if that takes longer than `timeoutMs` (Infinity: as long as it takes). */
export async function jobsDone(jobs: readonly FlushJob[], timeoutMs: number): Promise<boolean> {
  const all = Promise.all(jobs.map((j) => j.done)).then(() => true);
  if (!Number.isFinite(timeoutMs)) return all;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs)));
  try {
    return await Promise.race([all, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

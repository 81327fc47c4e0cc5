/**
 * Compacts one hour partition: batches of its files (seq order) are merged, each through a crash-safe
 * swap. Per batch: merge manifest committed -> output written to scratch -> output put under a fresh
 * key -> in one synchronous step, re-check the partition and `manifest.replace(inputs, [output])` (one
 * SQLite transaction, inputs tombstoned) -> merge manifest cleared -> reaper collects the inputs once
 * no query reads them. A crash before the swap leaves the inputs registered (start-up deletes the
 * output); after it, the output (start-up only clears the manifest). See compaction-recovery.ts.
 */
import { rm } from 'node:fs/promises';
import { basename } from 'node:path';
import type { FileManifestStore, ManifestFile } from '../../catalog/index.ts';
import type { DuckDBConnection } from '../../duckdb/index.ts';
import { randomId } from '../../lib/crypto.ts';
import type { FileReaper, ObjectStore } from '../../storage/index.ts';
import type { CompactionStore } from './compaction-store.ts';
import type { CrashStep } from './crash-hook.ts';
import { mergedFileKey } from './output-key.ts';
import { batchSizes, type Partition } from './partition-planner.ts';
import { mergeFiles } from './partition-merge.ts';

const HOUR_US = 3_600_000_000;

/** True when acknowledged rows of (database, measurement) with time in [from, to) µs are not yet in registered files. */
export type UnflushedCheck = (database: string, measurement: string, from: number, to: number) => boolean;

/** What a merge needs besides its DuckDB connection. */
export interface MergeDeps {
  store: ObjectStore;
  manifest: FileManifestStore;
  reaper: FileReaper;
  jobs: CompactionStore;
  unflushed: UnflushedCheck;
  crash: (step: CrashStep) => void;
}

/** What compacting one partition did; `skipped` says why (part of) it was left alone. */
export interface PartitionOutcome {
  skipped: string | null;
  filesIn: number;
  filesOut: number;
  bytesIn: number;
  bytesOut: number;
  rowsIn: number;
  rowsOut: number;
}

/** Merges the partition's files (re-read from the manifest now) into one file, `maxFiles` at a time. */
export async function compactPartition(deps: MergeDeps, conn: DuckDBConnection, jobId: string, p: Partition, maxFiles: number): Promise<PartitionOutcome> {
  const files = deps.manifest
    .list({ database: p.database, measurement: p.measurement, minTime: p.hour, maxTime: p.hour + HOUR_US - 1 })
    .filter((f) => f.hour === p.hour)
    .sort((a, b) => a.seq - b.seq || a.path.localeCompare(b.path));
  const out: PartitionOutcome = { skipped: null, filesIn: 0, filesOut: 0, bytesIn: 0, bytesOut: 0, rowsIn: 0, rowsOut: 0 };
  if (files.length < 2) return { ...out, skipped: 'fewer than two files' };
  let carry: ManifestFile | null = null;
  let at = 0;
  for (const size of batchSizes(files.length, maxFiles)) {
    const originals = files.slice(at, at + size);
    const batch: ManifestFile[] = carry ? [carry, ...originals] : originals;
    const merged = await mergeBatch(deps, conn, jobId, batch);
    if (typeof merged === 'string') return { ...out, skipped: merged };
    at += size;
    out.filesIn += originals.length;
    out.bytesIn += originals.reduce((n, f) => n + f.bytes, 0);
    out.rowsIn += originals.reduce((n, f) => n + f.rows, 0);
    carry = merged;
    out.filesOut = 1;
    out.bytesOut = merged.bytes;
    out.rowsOut = merged.rows;
  }
  return out;
}

/** Merges one batch and swaps it in; returns the output's manifest entry, or why nothing changed. */
async function mergeBatch(deps: MergeDeps, conn: DuckDBConnection, jobId: string, batch: ManifestFile[]): Promise<ManifestFile | string> {
  const { store, manifest, jobs, crash } = deps;
  const first = batch[0]!;
  const key = await mergedFileKey(batch, store, manifest);
  const id = randomId();
  jobs.prepare({ id, jobId, database: first.database, measurement: first.measurement, hour: first.hour, inputs: batch.map((f) => f.path), output: key, createdAt: new Date().toISOString() });
  const scratch = store.scratchPath(basename(key));
  try {
    crash('after_manifest');
    // Leased while read: a concurrent rewrite (delete, another merge) cannot have the reaper remove them meanwhile.
    const release = deps.reaper.acquire(batch.map((f) => f.path));
    let result;
    try {
      const inputs = await Promise.all(batch.map(async (f) => ({ path: await store.localPath(f.path), seq: f.seq })));
      result = await mergeFiles(conn, inputs, scratch);
    } finally {
      release();
    }
    if ('skipped' in result) {
      await rm(scratch, { force: true });
      jobs.finish(id);
      return result.skipped;
    }
    crash('after_write');
    const info = await store.put(key, { file: scratch });
    crash('after_put');
    const s = result.written;
    const output: ManifestFile = {
      path: key,
      database: first.database,
      measurement: first.measurement,
      hour: first.hour,
      minTime: s.minTime,
      maxTime: s.maxTime,
      rows: s.rows,
      bytes: info.bytes,
      columns: s.columns,
      // The newest input's sequence: every other file of the hour is older than all inputs or newer than all.
      seq: Math.max(...batch.map((f) => f.seq)),
      createdAt: new Date().toISOString(),
    };
    // Check and swap in one step (synchronous on one node; in a cluster the shared manifest's own check refuses a swap whose inputs went).
    const conflict = swapConflict(deps, batch, output.seq);
    if (conflict) {
      await store.delete(key);
      jobs.finish(id);
      return conflict;
    }
    await manifest.commit(batch.map((f) => f.path), [output]);
    crash('after_swap');
    jobs.finish(id);
    void deps.reaper.collect();
    return output;
  } catch (err) {
    // Not swapped: the output must not survive (a manifest rebuild would count its rows twice).
    if (!manifest.get(key)) {
      await store.delete(key).catch(() => false);
      await rm(scratch, { force: true }).catch(() => undefined);
      jobs.finish(id);
    }
    throw err;
  }
}

/**
 * Why the swap must not happen now, or null. The inputs must all still be registered (no delete or
 * other merge replaced one), no other file of the hour may be as old as the inputs (a flush that
 * registered late), and no rows of the hour may still be on their way to a file (their flush holds a
 * sequence number reserved earlier, possibly older than the output's).
 */
function swapConflict(deps: MergeDeps, batch: readonly ManifestFile[], outputSeq: number): string | null {
  const { manifest } = deps;
  const first = batch[0]!;
  if (batch.some((f) => manifest.get(f.path) === null)) return 'an input file was replaced meanwhile; retried on the next run';
  const inputs = new Set(batch.map((f) => f.path));
  const late = manifest
    .list({ database: first.database, measurement: first.measurement, minTime: first.hour, maxTime: first.hour + HOUR_US - 1 })
    .some((f) => f.hour === first.hour && !inputs.has(f.path) && f.seq <= outputSeq);
  if (late) return 'an older flush registered meanwhile; retried on the next run';
  if (deps.unflushed(first.database, first.measurement, first.hour, first.hour + HOUR_US)) return 'rows of this hour are being flushed; retried on the next run';
  return null;
}

/**
 * Removes the rows matching a condition from one measurement, the mechanism shared by delete,
 * retention and continuous-query window replacement. Under the measurement's lock: flush its
 * buffered rows (so they are in files and can be matched), count matches per candidate file, then
 * for each file with matches either drop it (no row left) or write the remaining rows to a new file
 * and swap it in for the old one in one manifest transaction. The old file is tombstoned and deleted
 * by the reaper once no query reads it. The new file gets a new key, recorded as pending before it
 * is put: a crash before the swap leaves the old file registered and start-up deletes the new one,
 * so every file is either old or new, never half-written and never counted twice. A new key also
 * lets compaction see that its input was replaced (it re-checks its inputs by path before its own
 * swap). A file that fails is left as it was and reported; a file compacted meanwhile is retried.
 */
import { rm } from 'node:fs/promises';
import { basename } from 'node:path';
import type { FileManifestStore, ManifestFile } from '../../catalog/index.ts';
import type { ConnectionPool, DuckDBConnection } from '../../duckdb/index.ts';
import { invalid, messageOf, unavailable } from '../../lib/errors.ts';
import type { Logger } from '../../observability/index.ts';
import type { ParquetCompression } from '../../parquet/index.ts';
import { dataFileKey, type FileReaper, type ObjectStore } from '../../storage/index.ts';
import type { MeasurementLocks } from '../measurement-locks.ts';
import { countMatches, writeRemaining } from './file-rewriter.ts';

/** What to remove from one measurement. */
export interface RowRemoval {
  database: string;
  measurement: string;
  /** Trusted SQL boolean expression: rows where it is TRUE are removed. */
  condition: string;
  /** Columns the condition names (a file lacking one reads it as NULL). */
  columns: readonly string[];
  /** Only files overlapping [minTime, maxTime] (epoch µs, inclusive; open when omitted) can match. */
  minTime?: number;
  maxTime?: number;
  /** Files for which this is true match entirely and are dropped without being read (retention). */
  wholeFile?: (f: ManifestFile) => boolean;
  /** Refuse with 400, changing nothing, when more rows match (0 or omitted: no limit). */
  maxRows?: number;
  /** Name of the limit for the 400 message. */
  maxRowsSetting?: string;
}

/** Outcome: rows removed, files removed entirely, files rewritten with their remaining rows, files that failed. */
export interface RemovalResult {
  deleted_rows: number;
  deleted_files: number;
  rewritten_files: number;
  failed_files: string[];
  /** Storage key -> why that file failed. */
  errors: Record<string, string>;
}

/** What the remover needs from the write buffers. */
export interface BufferFlusher {
  flushMeasurement(database: string, measurement?: string, timeoutMs?: number): Promise<boolean>;
}

/** Collaborators, built by main.ts. */
export interface RowRemoverDeps {
  manifest: FileManifestStore;
  store: ObjectStore;
  reaper: FileReaper;
  buffers: BufferFlusher;
  /** Connections of the sandboxed maintenance DuckDB instance (reads and writes only under the storage root). */
  pool: ConnectionPool;
  locks: MeasurementLocks;
  compression: ParquetCompression;
  logger: Logger;
  /** How long to wait for the measurement's buffered rows to reach files. */
  flushTimeoutMs: number;
}

/** Planning rounds when files are compacted under a running removal. */
const MAX_PASSES = 3;

interface Planned {
  file: ManifestFile;
  matched: number;
  whole: boolean;
}

/** Removes matching rows from a measurement's files; see the file comment. */
export class RowRemover {
  constructor(private readonly deps: RowRemoverDeps) {}

  /** Removes the rows of `req`; throws 400 (nothing changed) when `maxRows` is exceeded. */
  async remove(req: RowRemoval): Promise<RemovalResult> {
    const { locks } = this.deps;
    return locks.run([req], async () => {
      // The whole database, not only this measurement: one write (one WAL entry) can carry several
      // measurements, and its entry is released only once all of them are in files. An entry still in
      // the WAL would bring the removed rows back at the next start-up replay.
      const flushed = await this.deps.buffers.flushMeasurement(req.database, undefined, this.deps.flushTimeoutMs);
      if (!flushed) throw unavailable(`cannot remove rows of ${req.database}.${req.measurement}: its buffered rows did not reach storage in time; retry later`, 5);
      return this.deps.pool.use((conn) => this.removeLocked(conn, req));
    });
  }

  private async removeLocked(conn: DuckDBConnection, req: RowRemoval): Promise<RemovalResult> {
    const result: RemovalResult = { deleted_rows: 0, deleted_files: 0, rewritten_files: 0, failed_files: [], errors: {} };
    const failed = new Map<string, string>();
    let plan = await this.plan(conn, req, failed);
    const total = plan.reduce((n, p) => n + p.matched, 0);
    if (req.maxRows && total > req.maxRows)
      throw invalid(`cannot delete: ${total} rows match, more than ${req.maxRowsSetting ?? 'the limit'} (${req.maxRows}); narrow the condition`);
    // A file compacted between planning and its swap is gone; its rows are in the merged file, so plan again.
    for (let pass = 0; pass < MAX_PASSES && plan.length > 0; pass++) {
      let replacedMeanwhile = false;
      for (const p of plan) {
        try {
          const left = await this.apply(conn, req, p);
          if (left === null) {
            replacedMeanwhile = true;
            continue;
          }
          result.deleted_rows += p.matched;
          if (left === 0) result.deleted_files++;
          else result.rewritten_files++;
        } catch (err) {
          failed.set(p.file.path, await this.reason(p.file.path, err));
        }
      }
      plan = replacedMeanwhile ? (await this.plan(conn, req, failed)).filter((p) => !failed.has(p.file.path)) : [];
    }
    for (const p of plan) failed.set(p.file.path, 'cannot rewrite: the file kept being replaced (compaction); retry later');
    for (const [path, error] of failed) {
      result.failed_files.push(path);
      result.errors[path] = error;
      this.deps.logger.warn('cannot remove rows from data file; left unchanged', { path, error });
    }
    // Replaced files are deleted once no query holds them; this call only starts that.
    if (result.deleted_files + result.rewritten_files > 0) void this.deps.reaper.collect();
    return result;
  }

  /** Files with matching rows and how many; files that cannot be read go to `failed`. */
  private async plan(conn: DuckDBConnection, req: RowRemoval, failed: Map<string, string>): Promise<Planned[]> {
    const plan: Planned[] = [];
    for (const file of this.deps.manifest.list(req)) {
      try {
        const whole = req.wholeFile?.(file) ?? false;
        const matched = whole ? file.rows : await countMatches(conn, await this.deps.store.localPath(file.path), req.condition, req.columns);
        if (matched > 0) plan.push({ file, matched, whole });
      } catch (err) {
        failed.set(file.path, await this.reason(file.path, err));
      }
    }
    return plan;
  }

  /**
   * Drops or rewrites one file; returns the rows left (0: the file left the manifest), or null when
   * the file was replaced meanwhile (nothing changed).
   */
  private async apply(conn: DuckDBConnection, req: RowRemoval, p: Planned): Promise<number | null> {
    const { manifest, store } = this.deps;
    const f = p.file;
    const unchanged = () => manifest.get(f.path)?.seq === f.seq;
    if (p.whole || p.matched >= f.rows) {
      if (!unchanged()) return null;
      await manifest.commit([f.path], []);
      return 0;
    }
    const key = dataFileKey(f.database, f.measurement, f.hour);
    const scratch = store.scratchPath(basename(key));
    let put = false;
    try {
      const rest = await writeRemaining(conn, await store.localPath(f.path), req.condition, req.columns, scratch, this.deps.compression);
      if (rest.rows === 0) {
        await rm(scratch, { force: true });
        if (!unchanged()) return null;
        await manifest.commit([f.path], []);
        return 0;
      }
      manifest.intend(key, 'drop');
      const info = await store.put(key, { file: scratch });
      put = true;
      // Check and swap in one synchronous step. The sequence stays: the rows keep their place in last-write-wins order.
      if (!unchanged()) {
        await this.discard(key);
        return null;
      }
      await manifest.commit([f.path], [{ ...f, path: key, rows: rest.rows, minTime: rest.minTime, maxTime: rest.maxTime, bytes: info.bytes }]);
      return rest.rows;
    } catch (err) {
      await rm(scratch, { force: true }).catch(() => undefined);
      if (put && !manifest.get(key)) await this.discard(key).catch(() => undefined);
      else if (!put) manifest.clearPending(key);
      throw err;
    }
  }

  /** A failure as the API shows it: the engine's first line, with the file named by its key, not its path on the server. */
  private async reason(key: string, err: unknown): Promise<string> {
    let msg = messageOf(err);
    const excerpt = msg.indexOf('\n\nLINE ');
    if (excerpt >= 0) msg = msg.slice(0, excerpt);
    const local = await this.deps.store.localPath(key).catch(() => null);
    return local ? msg.split(local).join(key) : msg;
  }

  /** Removes a new file that was not swapped in. */
  private async discard(key: string): Promise<void> {
    await this.deps.store.delete(key);
    this.deps.manifest.clearPending(key);
  }
}

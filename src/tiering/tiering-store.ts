/**
 * Tiering's tables (migration 0012): policies, migration jobs, and moves in progress. Which files
 * are hot or cold is the file manifest's (its `tier` column); these rows never decide what queries read.
 */
import type { CatalogDb, FileTier } from '../catalog/index.ts';

/** A hot-age policy for a database, or for one measurement of it. */
export interface TieringPolicy {
  id: string;
  database: string;
  measurement: string | null;
  hot_max_age_days: number;
  created_at: string;
  updated_at: string;
}

/** One migration run, as status and the job routes show it. */
export interface TieringJob {
  id: string;
  status: 'running' | 'completed' | 'failed';
  trigger: 'manual' | 'scheduled';
  started_at: string;
  finished_at: string | null;
  files_moved: number;
  bytes_moved: number;
  failures: number;
  error: string | null;
}

/** Totals of one tier. */
export interface TierTotals {
  files: number;
  bytes: number;
}

/** SQL of the tiering tables; see the file comment. */
export class TieringStore {
  constructor(private readonly db: CatalogDb) {}

  policies(): TieringPolicy[] {
    return this.db.query<TieringPolicy, []>('SELECT * FROM tiering_policies ORDER BY database, measurement').all();
  }

  policy(id: string): TieringPolicy | null {
    return this.db.query<TieringPolicy, [string]>('SELECT * FROM tiering_policies WHERE id = ?').get(id);
  }

  /** The policy with exactly this target, or null. */
  policyFor(database: string, measurement: string | null): TieringPolicy | null {
    return this.db
      .query<TieringPolicy, [string, string]>("SELECT * FROM tiering_policies WHERE database = ? AND coalesce(measurement, '') = ?")
      .get(database, measurement ?? '');
  }

  savePolicy(p: TieringPolicy): void {
    this.db
      .query(
        `INSERT INTO tiering_policies (id, database, measurement, hot_max_age_days, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET database = excluded.database, measurement = excluded.measurement,
           hot_max_age_days = excluded.hot_max_age_days, updated_at = excluded.updated_at`,
      )
      .run(p.id, p.database, p.measurement, p.hot_max_age_days, p.created_at, p.updated_at);
  }

  deletePolicy(id: string): boolean {
    return this.db.query('DELETE FROM tiering_policies WHERE id = ?').run(id).changes > 0;
  }

  /** Records that `path` is being copied to cold (start-up settles what a crash leaves). */
  beginMove(path: string): void {
    this.db.query('INSERT OR REPLACE INTO tiering_moves (path, started_at) VALUES (?, ?)').run(path, new Date().toISOString());
  }

  endMove(path: string): void {
    this.db.query('DELETE FROM tiering_moves WHERE path = ?').run(path);
  }

  /** Moves begun and not finished. */
  openMoves(): string[] {
    return this.db.query<{ path: string }, []>('SELECT path FROM tiering_moves ORDER BY started_at').all().map((r) => r.path);
  }

  startJob(id: string, trigger: TieringJob['trigger']): void {
    this.db.query("INSERT INTO tiering_jobs (id, status, trigger, started_at) VALUES (?, 'running', ?, ?)").run(id, trigger, new Date().toISOString());
  }

  finishJob(id: string, r: { files: number; bytes: number; failures: number; error: string | null }): void {
    this.db
      .query('UPDATE tiering_jobs SET status = ?, finished_at = ?, files_moved = ?, bytes_moved = ?, failures = ?, error = ? WHERE id = ?')
      .run(r.error ? 'failed' : 'completed', new Date().toISOString(), r.files, r.bytes, r.failures, r.error, id);
  }

  job(id: string): TieringJob | null {
    return this.db.query<TieringJob, [string]>('SELECT * FROM tiering_jobs WHERE id = ?').get(id);
  }

  /** The latest finished job, or null. */
  lastFinished(): TieringJob | null {
    return this.db.query<TieringJob, []>("SELECT * FROM tiering_jobs WHERE status != 'running' ORDER BY started_at DESC LIMIT 1").get();
  }

  /** A job left running by a crash is failed at start. */
  failInterrupted(): void {
    this.db.query("UPDATE tiering_jobs SET status = 'failed', finished_at = ?, error = 'interrupted by a restart' WHERE status = 'running'").run(new Date().toISOString());
  }

  /** Files and bytes per tier and measurement (the service sums what a caller may read). */
  totals(): TierRow[] {
    return this.db
      .query<TierRow, []>('SELECT tier, database, measurement, count(*) AS files, coalesce(sum(bytes), 0) AS bytes FROM files GROUP BY tier, database, measurement ORDER BY database, measurement, tier')
      .all();
  }

  /**
   * Listed files with their tier, filtered, newest hour first: the first `q.limit` that `keep` accepts
   * (what the caller may read). Rows are read one at a time, so a narrow caller costs no more than its page.
   */
  files(q: { database?: string; measurement?: string; tier?: FileTier; limit: number }, keep: (f: FileRow) => boolean): FileRow[] {
    const rows = this.db
      .query<FileRow, [string | null, string | null, string | null]>(
        `SELECT path, database, measurement, hour, bytes, tier, moved_at FROM files
         WHERE (?1 IS NULL OR database = ?1) AND (?2 IS NULL OR measurement = ?2) AND (?3 IS NULL OR tier = ?3)
         ORDER BY hour DESC, path`,
      )
      .iterate(q.database ?? null, q.measurement ?? null, q.tier ?? null);
    const out: FileRow[] = [];
    for (const f of rows) {
      if (!keep(f)) continue;
      out.push(f);
      if (out.length >= q.limit) break;
    }
    return out;
  }
}

/** Files and bytes of one measurement in one tier. */
export interface TierRow {
  tier: FileTier;
  database: string;
  measurement: string;
  files: number;
  bytes: number;
}

/** One file as the tiering routes list it. */
export interface FileRow {
  path: string;
  database: string;
  measurement: string;
  hour: number;
  bytes: number;
  tier: FileTier;
  moved_at: string | null;
}

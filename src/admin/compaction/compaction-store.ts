/**
 * Compaction's SQL: merge manifests (a row per merge between "about to swap" and "swapped", read back
 * at start to finish or roll back an interrupted merge) and the job history behind /stats and /history.
 */
import type { CatalogDb } from '../../catalog/index.ts';

/** A merge in progress: which files it replaces with which output key. */
export interface MergeManifest {
  id: string;
  jobId: string;
  database: string;
  measurement: string;
  hour: number;
  inputs: string[];
  output: string;
  createdAt: string;
}

/** One finished job as /history shows it. */
export interface JobRecord {
  job_id: string;
  tier: string;
  database: string | null;
  measurement: string | null;
  status: 'completed' | 'failed';
  started_at: string;
  finished_at: string;
  partitions: number;
  partitions_skipped: number;
  files_in: number;
  files_out: number;
  bytes_in: number;
  bytes_out: number;
  rows_in: number;
  rows_out: number;
  error: string | null;
}

/** Totals over the whole history (the status record's `stats`). */
export interface JobTotals {
  total_jobs: number;
  successful_jobs: number;
  failed_jobs: number;
  total_files_compacted: number;
  total_bytes_saved: number;
}

const HISTORY_KEPT = 1000;

/** Persistence of merge manifests and job history in the catalog database. */
export class CompactionStore {
  constructor(private readonly db: CatalogDb) {}

  /** Records a merge before its output can appear in storage (committed before the write starts). */
  prepare(m: MergeManifest): void {
    this.db
      .prepare('INSERT INTO compaction_manifests (id, job_id, database, measurement, hour, inputs, output, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(m.id, m.jobId, m.database, m.measurement, m.hour, JSON.stringify(m.inputs), m.output, m.createdAt);
  }

  /** Forgets a merge once it is swapped or rolled back. */
  finish(id: string): void {
    this.db.prepare('DELETE FROM compaction_manifests WHERE id = ?').run(id);
  }

  /** Merges that were neither swapped nor rolled back (left by a crash). */
  pending(): MergeManifest[] {
    type Row = { id: string; job_id: string; database: string; measurement: string; hour: number; inputs: string; output: string; created_at: string };
    return this.db
      .query<Row, []>('SELECT * FROM compaction_manifests ORDER BY created_at')
      .all()
      .map((r) => ({ id: r.id, jobId: r.job_id, database: r.database, measurement: r.measurement, hour: r.hour, inputs: JSON.parse(r.inputs) as string[], output: r.output, createdAt: r.created_at }));
  }

  /** Appends a finished job, keeping the newest 1000. */
  record(j: JobRecord): void {
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT OR REPLACE INTO compaction_jobs (job_id, tier, database, measurement, status, started_at, finished_at, partitions, partitions_skipped,
             files_in, files_out, bytes_in, bytes_out, rows_in, rows_out, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(j.job_id, j.tier, j.database, j.measurement, j.status, j.started_at, j.finished_at, j.partitions, j.partitions_skipped,
          j.files_in, j.files_out, j.bytes_in, j.bytes_out, j.rows_in, j.rows_out, j.error);
      this.db.prepare(`DELETE FROM compaction_jobs WHERE job_id NOT IN (SELECT job_id FROM compaction_jobs ORDER BY finished_at DESC LIMIT ${HISTORY_KEPT})`).run();
    })();
  }

  /** The newest `limit` finished jobs, newest first. */
  history(limit: number): JobRecord[] {
    return this.db.query<JobRecord, [number]>('SELECT * FROM compaction_jobs ORDER BY finished_at DESC LIMIT ?').all(limit);
  }

  /** Totals over the kept history. */
  totals(): JobTotals {
    const r = this.db
      .query<JobTotals, []>(
        `SELECT count(*) AS total_jobs,
                coalesce(sum(status = 'completed'), 0) AS successful_jobs,
                coalesce(sum(status = 'failed'), 0) AS failed_jobs,
                coalesce(sum(files_in), 0) AS total_files_compacted,
                coalesce(sum(max(bytes_in - bytes_out, 0)), 0) AS total_bytes_saved
         FROM compaction_jobs`,
      )
      .get();
    return r ?? { total_jobs: 0, successful_jobs: 0, failed_jobs: 0, total_files_compacted: 0, total_bytes_saved: 0 };
  }
}

/**
 * What a caller sees of tiering (GET /files, /stats, /policies, /jobs/:id, /status): only files,
 * totals and policies of what it may read, by the one rule of lib/table-access.ts. A job's error
 * names a data file when a move failed (moveError); it is shown only to a caller that may read it.
 */
import { errorFor, isReadable, type TableAccess } from '../lib/table-access.ts';
import type { TieringJob, TierRow, TierTotals } from './tiering-store.ts';

/** The error a run records for a file it could not move; readableJobError reads the file's path back. */
export function moveError(path: string, cause: string): string {
  return `cannot move ${path} to the cold tier: ${cause}`;
}

const MOVE_ERROR = /^cannot move ([^/\s]+)\/([^/\s]+)\//;

/** `error` when `access` may read what it names (a move error of a readable file), else as lib's errorFor. */
export function readableJobError(access: TableAccess, error: string | null): string | null {
  const named = error === null ? null : MOVE_ERROR.exec(error);
  return named && isReadable(access, named[1]!, named[2]!) ? error : errorFor(access, error);
}

/** `job` with its error cut to what `access` may read. */
export function jobView<J extends TieringJob | null>(access: TableAccess, job: J): J {
  return job === null ? job : { ...job, error: readableJobError(access, job.error) };
}

/** A caller's totals: of every readable measurement, in all and per database (a database with none is left out). */
export function readableTotals(rows: readonly TierRow[], access: TableAccess): { hot: TierTotals; cold: TierTotals; by_database: Record<string, { hot: TierTotals; cold: TierTotals }> } {
  const all = { hot: { files: 0, bytes: 0 }, cold: { files: 0, bytes: 0 } };
  const by: Record<string, { hot: TierTotals; cold: TierTotals }> = {};
  for (const r of rows) {
    if (!isReadable(access, r.database, r.measurement)) continue;
    const d = (by[r.database] ??= { hot: { files: 0, bytes: 0 }, cold: { files: 0, bytes: 0 } });
    for (const t of [d[r.tier], all[r.tier]]) {
      t.files += r.files;
      t.bytes += r.bytes;
    }
  }
  return { ...all, by_database: by };
}

/**
 * What a caller sees of compaction jobs (GET /jobs, /history): a job of one database (and measurement)
 * only when it may read it; a job over every database with only the partition errors it may read.
 * Each error names its partition first (`<db>/<m>/yyyy/mm/dd/hh: <message>`), and a record keeps them
 * joined with '; ', so a partition name after '; ' starts the next one.
 */
import { isReadable, UNRESTRICTED, type TableAccess } from '../../lib/table-access.ts';

const NEXT_PARTITION = /; (?=[^/;\s]+\/[^/;\s]+\/\d{4}\/\d{2}\/\d{2}\/\d{2}: )/;

/** True when `access` may see a job of `database`.`measurement` (null: every database or measurement). */
export function jobVisible(access: TableAccess, job: { database: string | null; measurement: string | null }): boolean {
  return job.database === null || isReadable(access, job.database, job.measurement);
}

/** The partition errors of `errors` that `access` may read; one that names no partition only for unrestricted access. */
export function readableErrors(access: TableAccess, errors: readonly string[]): string[] {
  if (access === UNRESTRICTED) return [...errors];
  return errors.filter((e) => {
    const [database, measurement] = e.split('/', 2);
    return measurement !== undefined && !measurement.includes(' ') && access.allows('read', database!, measurement);
  });
}

/** A record's joined error text cut to what `access` may read; null when nothing is left. */
export function readableErrorText(access: TableAccess, error: string | null): string | null {
  if (error === null || access === UNRESTRICTED) return error;
  const kept = readableErrors(access, error.split(NEXT_PARTITION));
  return kept.length > 0 ? kept.join('; ') : null;
}

/**
 * Flushes that cannot succeed. A flush fails either because storage or the disk is in trouble (then
 * waiting helps, and the rows are kept and retried for as long as it takes), or because of the rows
 * themselves: the writer runs out of memory on them, refuses a value, or its worker dies on them. The
 * second kind fails again every time, so after `ingest.flush_max_attempts` such failures the rows
 * leave memory for a line-protocol file an operator can read and send again (see README, "Set-aside
 * rows"), instead of being retried until the process dies.
 */
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeLineProtocol } from '../ingest/index.ts';
import { messageOf } from '../lib/errors.ts';
import { syncFile } from '../lib/page-cache.ts';
import type { FlushJob } from './flush-job.ts';

/**
 * Failures of the storage or the disk under the scratch files, never of the rows: by error code (on the
 * error, or in the message of a storage error or of a flush worker's, which arrives as text only).
 */
const ENVIRONMENT_CODES = /\b(ENOSPC|EDQUOT|EROFS|EIO|EMFILE|ENFILE|EACCES|EPERM|ENOENT|ECONNREFUSED|ECONNRESET|ETIMEDOUT)\b/;
const ENVIRONMENT_WORDS = /no space left|disk quota|read-only file system|input\/output error|too many open files|permission denied|flush worker did not start|cannot open DuckDB/i;

/** Whether a failed attempt to turn a job's rows into Parquet says something about the rows (see the module comment). */
export function blamesTheRows(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const message = messageOf(err);
  return !(typeof code === 'string' && ENVIRONMENT_CODES.test(code)) && !ENVIRONMENT_CODES.test(message) && !ENVIRONMENT_WORDS.test(message);
}

/**
 * About how much text is encoded before it is written: a job is written a piece at a time, never as one
 * string, and rows made fat by huge values go a few (or one) at a time, so setting them aside takes
 * little more memory than they hold already.
 */
const PIECE_BYTES = 1 << 20;
const MAX_ROWS_PER_PIECE = 4096;

/**
 * Writes `job`'s rows as line protocol to `<dir>/<db>/<measurement>/<UTC time>-<seq>.lp`: a `.part`
 * file, synced, renamed, and the folder synced, so a file under its final name is whole and stays
 * (the rows' WAL entries are released next). On failure nothing is left behind. Returns the path.
 */
export async function writeSetAside(dir: string, job: FlushJob, reason: string): Promise<string> {
  const folder = join(dir, job.database, job.measurement);
  await mkdir(folder, { recursive: true });
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
  const path = join(folder, `${stamp}-${job.seq}.lp`);
  const part = `${path}.part`;
  try {
    await writeRows(part, job, reason);
    await rename(part, path);
    await syncFile(folder);
  } catch (err) {
    await rm(part, { force: true }).catch(() => undefined);
    throw err;
  }
  return path;
}

/** The header comments and every row, synced. */
async function writeRows(path: string, job: FlushJob, reason: string): Promise<void> {
  const file = await open(path, 'w');
  try {
    const why = reason.replace(/\s+/g, ' ').slice(0, 500);
    await file.write(
      `# svc set these ${job.rows} rows of ${job.database}.${job.measurement} aside at ${new Date().toISOString()}: their flush failed ${job.attempts} times (${why})\n` +
        `# Timestamps are in microseconds. Send them again with: svc write <this file> --db ${job.database} --precision us\n`,
    );
    const rowsPerPiece = Math.max(1, Math.min(MAX_ROWS_PER_PIECE, Math.floor((PIECE_BYTES * job.rows) / Math.max(1, job.bytes))));
    for (const batch of job.batches)
      for (let from = 0; from < batch.length; from += rowsPerPiece) await file.write(encodeLineProtocol(batch, from, Math.min(batch.length, from + rowsPerPiece)));
    await file.sync();
  } finally {
    await file.close();
  }
}

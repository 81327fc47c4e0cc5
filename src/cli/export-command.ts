/**
 * `svc export --db DB --measurement M [--from T] [--to T] --format parquet|csv --out FILE`: the rows of
 * one measurement in [from, to) ordered by time, through POST /api/v1/query/export, written to FILE
 * (a temporary name renamed when complete, so a failed export leaves no partial file). A progress
 * bar on a terminal, none when stderr is piped. Exit codes: 0 written, 1 failed, 2 usage.
 */
import { rename, rm } from 'node:fs/promises';
import { databaseNameProblem, measurementNameProblem } from '../lib/names.ts';
import { formatSize } from '../lib/sizes.ts';
import type { ParsedArgs } from './args.ts';
import { progressBar } from './progress-bar.ts';
import { postJson, serverError, serverTarget } from './server-target.ts';

const USAGE = 'usage: svc export --db DB --measurement M [--from TIME] [--to TIME] --format parquet|csv --out FILE [--url URL] [--token T]';

function fail(message: string, code = 1): number {
  process.stderr.write(`svc export: ${message}\n`);
  return code;
}

/** A --from/--to value (RFC 3339 or epoch milliseconds) as a DuckDB timestamp literal, or an error. */
export function timeLiteral(flag: string, value: string): string | Error {
  const ms = /^-?\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms)) return new Error(`--${flag}: expected an RFC 3339 time or epoch milliseconds, got '${value}'`);
  return `TIMESTAMP '${new Date(ms).toISOString().replace('T', ' ').replace('Z', '')}'`;
}

/** The SELECT an export runs. */
export function exportSql(database: string, measurement: string, from: string | null, to: string | null): string {
  const where = [from ? `time >= ${from}` : '', to ? `time < ${to}` : ''].filter(Boolean);
  return `SELECT * FROM "${database}"."${measurement}"${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY time`;
}

/** Runs `svc export ...`; resolves to the exit code. */
export async function runExportCommand(args: ParsedArgs, env: Record<string, string | undefined> = process.env): Promise<number> {
  const f = args.flags;
  const str = (k: string) => (typeof f[k] === 'string' ? (f[k] as string) : null);
  const db = str('db');
  const measurement = str('measurement');
  const format = str('format');
  const out = str('out');
  if (!db || !measurement || !format || !out) return fail(`--db, --measurement, --format and --out are required\n${USAGE}`, 2);
  if (format !== 'parquet' && format !== 'csv') return fail(`unknown format '${format}' (use parquet, csv)`, 2);
  const nameProblem = databaseNameProblem(db) ?? measurementNameProblem(measurement);
  if (nameProblem) return fail(nameProblem, 2);
  const from = str('from') === null ? null : timeLiteral('from', str('from')!);
  const to = str('to') === null ? null : timeLiteral('to', str('to')!);
  if (from instanceof Error) return fail(from.message, 2);
  if (to instanceof Error) return fail(to.message, 2);

  const target = serverTarget({ ...args, flags: { ...f, db: undefined } }, env);
  const started = performance.now();
  const temp = `${out}.${process.pid}.partial`;
  try {
    const res = await postJson(target, '/api/v1/query/export', { sql: exportSql(db, measurement, from, to), format });
    if (!res.ok) return fail(await serverError(res));
    const total = Number(res.headers.get('content-length') ?? '') || null;
    const bar = progressBar(process.stderr, 'export');
    const writer = Bun.file(temp).writer();
    let done = 0;
    for await (const chunk of res.body ?? []) {
      writer.write(chunk);
      done += chunk.byteLength;
      bar.update(done, total);
    }
    await writer.end();
    bar.finish(done, total);
    await rename(temp, out);
    const seconds = (performance.now() - started) / 1000;
    process.stderr.write(`exported ${res.headers.get('x-svc-row-count') ?? '?'} rows of ${db}.${measurement} to ${out} (${formatSize(done)}) in ${seconds.toFixed(2)} s\n`);
    return 0;
  } catch (err) {
    await rm(temp, { force: true });
    return fail((err as Error).message);
  }
}

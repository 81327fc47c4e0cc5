/** Shared helpers of the data-lifecycle suites (delete, retention, continuous queries). */
import { expect } from 'bun:test';
import { waitFor } from './parquet.ts';
import { json, type TestServer } from './server.ts';

export const HOUR_MS = 3_600_000;

/** Writes line protocol (ns timestamps) into `db`; expects 204. */
export async function writeLines(s: TestServer, db: string, lines: string[]): Promise<void> {
  const res = await s.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': db }, body: lines.join('\n') });
  expect(res.status).toBe(204);
}

/** Forces every buffer to Parquet. */
export async function flush(s: TestServer): Promise<void> {
  expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBeLessThan(300);
}

/** Rows of a query through POST /api/v1/query, as objects keyed by column name. */
export async function query(s: TestServer, sql: string): Promise<Record<string, unknown>[]> {
  const res = await json(s, 'POST', '/api/v1/query', { sql });
  expect({ status: res.status, error: res.body?.error }).toEqual({ status: 200, error: undefined });
  const cols = res.body.columns as string[];
  return (res.body.data as unknown[][]).map((row) => Object.fromEntries(cols.map((c, i) => [c, row[i]])));
}

/** The single number a `SELECT count(*) AS n ...` returns. */
export async function count(s: TestServer, sql: string): Promise<number> {
  return Number((await query(s, sql))[0]!.n);
}

/** `ms` as a line-protocol nanosecond timestamp. */
export const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

/**
 * What `observed` counts before and after the scheduler had `fires` chances to fire: a witness job on the
 * same schedule (its runs counted by `witnessRuns`) ran once, then `fires` times more.
 */
export async function acrossFires(witnessRuns: () => Promise<number>, fires: number, observed: () => Promise<number>): Promise<{ before: number; after: number }> {
  await waitFor(async () => (await witnessRuns()) >= 1, 20_000, 'the witness job to run');
  const before = await observed();
  const start = await witnessRuns();
  await waitFor(async () => (await witnessRuns()) >= start + fires, 20_000, `the witness job to run ${fires} more times`);
  return { before, after: await observed() };
}

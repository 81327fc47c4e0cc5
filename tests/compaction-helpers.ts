/** Shared steps of the compaction and backup suites: line-protocol writes, flushes, queries, polling. */
import { Database } from 'bun:sqlite';
import { join } from 'node:path';
import { dataFiles, queryFiles, waitFor } from './helpers/parquet.ts';
import { json, type TestServer } from './helpers/server.ts';

/** 2023-11-14T22:13:20Z: an hour long over, so every tier may take it. */
export const T0_MS = 1_700_000_000_000;

/** Writes line-protocol `lines` (ms precision) into `db` and expects 204. */
export async function writeLines(s: TestServer, db: string, lines: string[]): Promise<void> {
  const res = await s.fetch('/api/v1/write/line-protocol?precision=ms', { method: 'POST', headers: { 'x-svc-database': db }, body: lines.join('\n') });
  if (res.status !== 204) throw new Error(`write failed: ${res.status} ${await res.text()}`);
}

/** Flushes every buffer to Parquet. */
export async function flush(s: TestServer): Promise<void> {
  const res = await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
  if (res.status >= 300) throw new Error(`flush failed: ${res.status} ${await res.text()}`);
}

/** `n` points of measurement `m`: hosts h0..h(hosts-1), times T0 + offset + i ms, value `v`. */
export function points(m: string, n: number, opts: { offsetMs?: number; hosts?: number; value?: (i: number) => number } = {}): string[] {
  const hosts = opts.hosts ?? 4;
  const value = opts.value ?? ((i: number) => i * 0.5);
  return Array.from({ length: n }, (_, i) => `${m},host=h${i % hosts} v=${value(i)},n=${i}i ${T0_MS + (opts.offsetMs ?? 0) + i}`);
}

/** Rows of a SQL query over the query API, or (when it is not there) straight from the registered files. */
export async function rows(s: TestServer, db: string, sql: string): Promise<Record<string, unknown>[]> {
  const r = await json(s, 'POST', '/api/v1/query', { sql });
  if (r.status === 200 && Array.isArray(r.body?.data) && Array.isArray(r.body?.columns)) {
    const cols: string[] = r.body.columns.map((c: unknown) => (typeof c === 'string' ? c : (c as { name: string }).name));
    return r.body.data.map((row: unknown[]) => Object.fromEntries(cols.map((c, i) => [c, row[i]])));
  }
  throw new Error(`query failed: ${r.status} ${JSON.stringify(r.body)}`);
}

/** Registered data files of `db` (path, rows, bytes, seq) from the metadata database. */
export function manifestFiles(dir: string, db?: string): { path: string; rows: number; bytes: number; seq: number }[] {
  const sqlite = new Database(join(dir, 'data', 'svc.db'), { readonly: true });
  try {
    const all = sqlite.query<{ path: string; rows: number; bytes: number; seq: number; database: string }, []>('SELECT path, rows, bytes, seq, database FROM files ORDER BY path').all();
    return all.filter((f) => db === undefined || f.database === db);
  } finally {
    sqlite.close();
  }
}

/** Sum of rows over the files on disk under `db/`, read with DuckDB (independent of the server). */
export async function rowsOnDisk(dir: string, db: string): Promise<number> {
  if (!dataFiles(dir).some((f) => f.startsWith(db + '/'))) return 0;
  return Number((await queryFiles(dir, `SELECT count(*) AS c FROM $files(${db}/**/*.parquet)`))[0]!.c);
}

/** Waits until no compaction job runs and `history` holds at least `n` jobs; returns the newest. */
export async function waitForJobs(s: TestServer, n: number): Promise<Record<string, any>> {
  let last: Record<string, any> = {};
  await waitFor(async () => {
    const jobs = await json(s, 'GET', '/api/v1/compaction/jobs');
    const hist = await json(s, 'GET', '/api/v1/compaction/history');
    last = hist.body.history[0];
    return jobs.body.count === 0 && hist.body.count >= n;
  }, 60_000, `${n} compaction job(s)`);
  return last;
}

export { dataFiles, queryFiles, waitFor };

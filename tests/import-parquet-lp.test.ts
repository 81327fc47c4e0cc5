/** POST /api/v1/import/parquet and /api/v1/import/lp end to end: files written by DuckDB, precision, bad input. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DuckDBInstance } from '../src/duckdb/index.ts';
import { dataFiles } from './helpers/parquet.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response shapes are asserted by the tests
const jsonOf = (r: Response): Promise<any> => r.json();
let s: TestServer;
let dir: string;
beforeAll(async () => {
  s = await startServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-import-'));
});
afterAll(async () => {
  await s?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes a Parquet file with DuckDB from a SELECT and returns its bytes. */
async function parquetOf(select: string): Promise<Uint8Array> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const path = join(dir, `${crypto.randomUUID()}.parquet`);
  try {
    await conn.run(`COPY (${select}) TO '${path}' (FORMAT parquet)`);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  return Bun.file(path).bytes();
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response shapes are asserted by the tests
const post = async (path: string, body: RequestInit['body'], headers: Record<string, string> = {}): Promise<{ status: number; body: any }> => {
  const res = await s.fetch(path, { method: 'POST', headers, body });
  return { status: res.status, body: await res.json() };
};
const sql = async (q: string) => (await json(s, 'POST', '/api/v1/query', { sql: q })).body as { data: unknown[][] };
const octet = { 'content-type': 'application/octet-stream' };

describe('Parquet import', () => {
  test('a DuckDB-written file with a TIMESTAMP time column: 200k rows over 3 days, every type kept', async () => {
    const bytes = await parquetOf(
      `SELECT TIMESTAMP '2024-03-01' + INTERVAL (i) SECOND AS time, 'dev' || (i % 7) AS device, i AS n, i / 8 AS x, i % 3 = 0 AS flag,
              DATE '2024-01-01' + (i % 10)::INTEGER AS day FROM range(200000) t(i)`,
    );
    const r = await post('/api/v1/import/parquet?measurement=pq&db=impq', bytes, octet);
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({
      database: 'impq',
      measurement: 'pq',
      rows_imported: 200_000,
      partitions_created: 56,
      time_range_min: '2024-03-01T00:00:00Z',
      time_range_max: '2024-03-03T07:33:19Z',
      columns: ['time', 'device', 'n', 'x', 'flag', 'day'],
    });
    const q = await sql(`SELECT count(*), sum(n), max(x), count(*) FILTER (WHERE flag), min(day), typeof(any_value(day)), typeof(any_value(n)) FROM impq.pq`);
    expect(q.data[0]).toEqual([200_000, 19_999_900_000, 24_999.875, 66_667, '2024-01-01', 'VARCHAR', 'BIGINT']);
  });

  test('integer epoch time in another column (time_column, time_format and auto-detect), gzip body', async () => {
    const bytes = await parquetOf(`SELECT 1709251200000 + i * 1000 AS ts_ms, i AS v FROM range(10) t(i)`);
    for (const query of ['time_column=ts_ms&time_format=epoch_ms', 'time_column=ts_ms']) {
      const r = await post(`/api/v1/import/parquet?measurement=pq_int&db=impq&${query}`, gzipSync(bytes), octet);
      expect(r.status).toBe(200);
      expect(r.body.result).toMatchObject({ rows_imported: 10, time_range_min: '2024-03-01T00:00:00Z', time_range_max: '2024-03-01T00:00:09Z', columns: ['time', 'v'] });
    }
  });

  test('bad input: not Parquet, missing time column, empty body; nothing stored', async () => {
    let r = await post('/api/v1/import/parquet?measurement=pq_bad&db=impq', 'time,v\n1,2\n', octet);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/cannot import Parquet: the body is not a Parquet file: it does not start and end with the magic bytes PAR1/);
    r = await post('/api/v1/import/parquet?measurement=pq_bad&db=impq', await parquetOf(`SELECT 1 AS a`), octet);
    expect(r.body.error).toMatch(/unknown time column 'time': the columns are 'a'/);
    r = await post('/api/v1/import/parquet?measurement=pq_bad&db=impq', new Uint8Array(0), octet);
    expect(r.body.error).toMatch(/the file is empty/);
    r = await post('/api/v1/import/parquet?db=impq', await parquetOf(`SELECT 1 AS a`), octet);
    expect(r.body.error).toBe('measurement is required');
    expect(dataFiles(s.dir).filter((f) => f.startsWith('impq/pq_bad/'))).toEqual([]);
  });

  test('a DuckDB read error names the upload, never a server path', async () => {
    const enc = new TextEncoder();
    const broken = new Uint8Array([...enc.encode('PAR1'), 1, 2, 3, 4, 5, 6, 7, 8, ...enc.encode('PAR1')]);
    const r = await post('/api/v1/import/parquet?measurement=pq_bad&db=impq', broken, octet);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/^cannot import Parquet: cannot read the Parquet file: .*the upload/);
    expect(r.body.error).not.toContain(s.dir);
    const csv = await post('/api/v1/import/csv?measurement=csv_bad&db=impq', 'time,v\n1,"abc\n2,3\n', { 'content-type': 'text/csv' });
    expect(csv.status).toBe(400);
    expect(csv.body.error).not.toContain(s.dir);
    expect(csv.body.error).not.toMatch(/\.tmp|import-csv/);
  });
});

describe('line-protocol import', () => {
  const lp = (n: number, t0: number) => Array.from({ length: n }, (_, i) => `cpu,host=h${i % 3} usage=${i}.5,count=${i}i ${t0 + i}`).join('\n') + '\n';

  test('multipart file with x-svc-database and precision; several measurements', async () => {
    const form = new FormData();
    form.append('file', new Blob([lp(5000, 1_709_251_200) + 'mem,host=h0 free=1i 1709251200\n']), 'points.lp');
    const res = await s.fetch('/api/v1/import/lp?precision=s', { method: 'POST', headers: { 'x-svc-database': 'implp' }, body: form });
    const r = await jsonOf(res);
    expect(res.status).toBe(200);
    expect(r.result).toMatchObject({ database: 'implp', measurement: 'cpu,mem', rows_imported: 5001, partitions_created: 3, time_range_min: '2024-03-01T00:00:00Z' });
    expect((await sql(`SELECT count(*), sum(count), count(DISTINCT host) FROM implp.cpu`)).data[0]).toEqual([5000, 12_497_500, 3]);
    expect((await sql(`SELECT free FROM implp.mem`)).data).toEqual([[1]]);
  });

  test('a bad line fails the whole file with its line number; nothing stored', async () => {
    const body = lp(10, 1_709_251_200_000_000_000) + 'cpu,host=h1 usage= 1\n' + lp(10, 1_709_251_300_000_000_000);
    const res = await s.fetch('/api/v1/import/lp?db=implp2', { method: 'POST', body });
    const r = await jsonOf(res);
    expect(res.status).toBe(400);
    expect(r.error).toMatch(/^cannot import line protocol: 1 bad line, nothing imported; first bad line 11: /);
    expect(r.line).toBe(11);
    expect(dataFiles(s.dir).filter((f) => f.startsWith('implp2/'))).toEqual([]);
    const empty = await s.fetch('/api/v1/import/lp?db=implp2', { method: 'POST', body: '\n\n' });
    expect((await jsonOf(empty)).error).toMatch(/the file is empty/);
  });
});

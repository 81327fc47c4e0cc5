/** When buffers flush: size, age, explicit, shutdown; failed flushes keep rows; the manifest matches the files. */
import { Database } from 'bun:sqlite';
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack } from 'msgpackr';
import { dataFiles, queryFiles, waitFor } from './helpers/parquet.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response shapes are asserted by the tests
const jsonOf = (r: Response): Promise<any> => r.json();

const T_MS = 1_700_000_000_000;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const write = (s: TestServer, db: string, m: string, n: number, t0 = T_MS) =>
  s.fetch('/api/v1/write/msgpack', {
    method: 'POST',
    headers: { 'x-svc-database': db },
    body: pack({ m, columns: { time: Array.from({ length: n }, (_, i) => t0 + i), v: Array.from({ length: n }, (_, i) => i + 0.5) } }),
  });
const count = async (s: TestServer, db: string) =>
  dataFiles(s.dir).some((f) => f.startsWith(db + '/')) ? Number((await queryFiles(s.dir, `SELECT count(*) AS c FROM $files(${db}/**/*.parquet)`))[0]!.c) : 0;
const bufferStats = async (s: TestServer) => (await json(s, 'GET', '/api/v1/write/line-protocol/stats')).body.buffer;
const manifestRows = (dir: string) => {
  const db = new Database(join(dir, 'data', 'svc.db'), { readonly: true });
  try {
    return db.query<{ path: string; rows: number; min_time: number; max_time: number; seq: number }, []>('SELECT path, rows, min_time, max_time, seq FROM files ORDER BY path').all();
  } finally {
    db.close();
  }
};

describe('flushing', () => {
  test('on size: a buffer reaching ingest.max_buffer_size is written without any other trigger', async () => {
    const s = await startServer({ env: { SVC_INGEST_MAX_BUFFER_SIZE: '5', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' } });
    try {
      expect((await write(s, 'fs1', 'm', 3)).status).toBe(204);
      // A write is answered once its rows are in the buffer, past the size check that would seal it:
      // 3 rows (under 5) are held there, and no flush was queued, started or written.
      expect(await bufferStats(s)).toMatchObject({ buffered_records: 3, in_flight_jobs: 0, queue_depth: 0, flushes: 0 });
      expect(dataFiles(s.dir)).toEqual([]);
      expect((await write(s, 'fs1', 'm', 3, T_MS + 10)).status).toBe(204);
      await waitFor(async () => (await count(s, 'fs1')) === 6, 10_000, 'size flush');
    } finally {
      await s.cleanup();
    }
  });

  test('on age: rows older than ingest.max_buffer_age_ms are written', async () => {
    const s = await startServer({ env: { SVC_INGEST_MAX_BUFFER_AGE_MS: '200' } });
    try {
      expect((await write(s, 'fa1', 'm', 4)).status).toBe(204);
      await waitFor(async () => (await count(s, 'fa1')) === 4, 10_000, 'age flush');
    } finally {
      await s.cleanup();
    }
  });

  test('on shutdown, then restart: files and manifest survive; a lost manifest is rebuilt from storage', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-flush-'));
    dirs.push(dir);
    const env = { SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' };
    let s = await startServer({ dir, env });
    expect((await write(s, 'sd1', 'm', 7)).status).toBe(204);
    expect((await write(s, 'sd1', 'n', 2, T_MS + 7_200_000)).status).toBe(204);
    expect(dataFiles(dir)).toEqual([]);
    expect(await s.stop()).toBe(0);
    expect(dataFiles(dir)).toHaveLength(2);
    const before = manifestRows(dir);
    expect(before.map((r) => [r.path.split('/')[1], r.rows, r.min_time])).toEqual([
      ['m', 7, T_MS * 1000],
      ['n', 2, (T_MS + 7_200_000) * 1000],
    ]);
    // Forget the manifest; the next start reads the files back into it.
    const db = new Database(join(dir, 'data', 'svc.db'));
    db.exec('DELETE FROM files');
    db.close();
    s = await startServer({ dir, env });
    try {
      const after = manifestRows(dir);
      expect(after.map((r) => [r.path, r.rows, r.min_time, r.max_time])).toEqual(before.map((r) => [r.path, r.rows, r.min_time, r.max_time]));
      expect(await count(s, 'sd1')).toBe(9);
    } finally {
      await s.stop();
    }
  });

  test('a failed flush keeps its rows and succeeds on retry', async () => {
    const s = await startServer({ env: { SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' } });
    try {
      // A file where the database folder should be makes every put fail until it is removed.
      mkdirSync(join(s.dir, 'data', 'svc'), { recursive: true });
      writeFileSync(join(s.dir, 'data', 'svc', 'ff1'), 'in the way');
      expect((await write(s, 'ff1', 'm', 5)).status).toBe(204);
      const flush = s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
      await waitFor(async () => (await jsonOf(await s.fetch('/api/v1/write/line-protocol/stats'))).buffer.flush_failures > 0, 10_000, 'a failure');
      expect((await jsonOf(await s.fetch('/api/v1/write/line-protocol/health'))).status).toBe('degraded');
      unlinkSync(join(s.dir, 'data', 'svc', 'ff1'));
      expect((await flush).status).toBe(200);
      expect(await count(s, 'ff1')).toBe(5);
      const metrics = await (await s.fetch('/metrics')).text();
      expect(metrics).toMatch(/svc_buffer_flush_failures_total \d+/);
      expect(metrics).not.toMatch(/svc_buffer_flush_failures_total 0\b/);
    } finally {
      await s.cleanup();
    }
  });

  test('413 when the body, or what it inflates to, is larger than server.max_payload_size', async () => {
    const s = await startServer({ env: { SVC_SERVER_MAX_PAYLOAD_SIZE: '1KB' } });
    try {
      const big = 'm v=1 1\n'.repeat(200);
      expect((await s.fetch('/write?db=big', { method: 'POST', body: big })).status).toBe(413);
      expect((await s.fetch('/api/v1/write/line-protocol', { method: 'POST', body: gzipSync(big) })).status).toBe(413);
      expect((await s.fetch('/api/v1/write/msgpack', { method: 'POST', body: gzipSync(pack({ m: 'x', columns: { time: Array(300).fill(T_MS), v: Array(300).fill(1.5) } })) })).status).toBe(413);
      expect((await s.fetch('/write?db=big', { method: 'POST', body: 'm v=1 1\n' })).status).toBe(204);
    } finally {
      await s.cleanup();
    }
  });
});

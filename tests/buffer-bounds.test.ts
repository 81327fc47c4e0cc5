/**
 * Hostile values and the write buffers, end to end: buffered memory is bounded in bytes (503 with
 * Retry-After at ingest.max_buffered_size, acknowledged rows kept and written once storage returns),
 * and a flush that fails on its rows every time is set aside as line protocol after
 * ingest.flush_max_attempts instead of being retried until the process dies, also across a restart
 * with the WAL on.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseLineProtocol } from '../src/ingest/index.ts';
import { waitFor } from './helpers/parquet.ts';
import { startS3rver } from './helpers/s3rver.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

const T0 = 1_700_000_000_000_000_000n;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** `n` lines of measurement `m` from row `offset` on, each with a 400-character string field. */
const lines = (m: string, n: number, offset: number) =>
  Array.from({ length: n }, (_, i) => `${m},host=h${(i + offset) % 3} v=${i + offset},note="${'x'.repeat(400)}" ${T0 + BigInt(i + offset) * 1_000_000_000n}`).join('\n');
const write = (s: TestServer, db: string, m: string, n: number, offset = 0) =>
  s.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': db }, body: lines(m, n, offset) });
const flush = (s: TestServer) => s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
const stats = async (s: TestServer) => (await json(s, 'GET', '/api/v1/write/line-protocol/stats')).body.buffer;
const count = async (s: TestServer, table: string) => {
  const r = await json(s, 'POST', '/api/v1/query', { sql: `SELECT count(*) AS n FROM ${table}` });
  expect(r.status).toBe(200);
  return Number(r.body.data[0][0]);
};
const metric = async (s: TestServer, name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(await (await s.fetch('/metrics')).text())?.[1] ?? NaN);
const setAsideFiles = (dir: string, db: string, m: string) => {
  const folder = join(dir, 'data', 'set-aside', db, m);
  return readdirSync(folder).map((f) => join(folder, f));
};

describe('buffered bytes are bounded', () => {
  test('storage down: writes get 503 with Retry-After at ingest.max_buffered_size; acknowledged rows stay queryable and are written once it is back', async () => {
    const outage = await startS3rver(['bytes']);
    // One attempt only: storage failures must never count towards setting rows aside.
    const env = { ...outage.env('bytes', 'b'), SVC_INGEST_MAX_BUFFERED_SIZE: '64KB', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000', SVC_INGEST_FLUSH_MAX_ATTEMPTS: '1' };
    const s = await startServer({ env });
    try {
      await outage.stop();
      let accepted = 0;
      let refused: Response | null = null;
      for (let i = 0; i < 60 && !refused; i++) {
        const r = await write(s, 'bb', 'm', 10, i * 10);
        if (r.status === 204) accepted += 10;
        else refused = r;
      }
      expect(refused?.status).toBe(503);
      expect(refused!.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(((await refused!.json()) as { error: string }).error).toMatch(/^cannot accept write: .*\(ingest\.max_buffered_size = 64\.0 KB\); retry later$/);
      // 64 KB holds a few dozen of these rows, not hundreds.
      expect(accepted).toBeGreaterThan(0);
      expect(accepted).toBeLessThan(300);
      const held = await stats(s);
      expect(held.max_buffered_bytes).toBe(65536);
      expect(held.buffered_bytes + held.in_flight_bytes).toBeGreaterThanOrEqual(65536);
      expect(held.buffered_records + held.in_flight_records).toBe(accepted);
      const health = (await json(s, 'GET', '/health')).body.buffer;
      expect(health).toMatchObject({ max_buffered_bytes: 65536, buffered_records: accepted });
      expect((await json(s, 'GET', '/api/v1/write/line-protocol/health')).body).toMatchObject({ max_buffered_bytes: 65536, buffered_records: accepted });
      expect(await count(s, 'bb.m')).toBe(accepted);

      const flushed = flush(s);
      await waitFor(async () => (await stats(s)).flush_failures >= 2, 30_000, 'flushes failing against the stopped store');
      expect((await stats(s)).set_aside_batches).toBe(0);

      await outage.start();
      expect((await flushed).status).toBe(200);
      expect(await count(s, 'bb.m')).toBe(accepted);
      const after = await stats(s);
      expect(after.buffered_bytes + after.in_flight_bytes).toBe(0);
      expect(after.set_aside_batches).toBe(0);
      expect(await metric(s, 'svc_buffer_batches_set_aside_total')).toBe(0);
      expect((await write(s, 'bb', 'm', 10, 10_000)).status).toBe(204);
    } finally {
      await s.cleanup();
      await outage.close();
    }
  }, 120_000);
});

describe('a flush that can never be written', () => {
  test('is set aside after ingest.flush_max_attempts: counted, in a line-protocol file, no longer retried; other measurements flush on', async () => {
    const s = await startServer({ env: { SVC_FAILPOINT: 'flush.write@poison', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' } });
    try {
      expect((await write(s, 'sa', 'poison', 7)).status).toBe(204);
      expect((await write(s, 'sa', 'good', 5)).status).toBe(204);
      expect(await count(s, 'sa.poison')).toBe(7);
      // The flush resolves once every job is in a file or set aside: no sleeping on the retries.
      expect((await flush(s)).status).toBe(200);
      const st = await stats(s);
      expect(st).toMatchObject({ set_aside_batches: 1, set_aside_records: 7, flush_failures: 3, buffered_records: 0, in_flight_records: 0, buffered_bytes: 0, in_flight_bytes: 0 });
      expect(await metric(s, 'svc_buffer_batches_set_aside_total')).toBe(1);
      expect(await metric(s, 'svc_buffer_records_set_aside_total')).toBe(7);
      expect(s.output()).toMatch(/set aside the rows of a flush that kept failing.*measurement=poison/);

      const [file, ...more] = setAsideFiles(s.dir, 'sa', 'poison');
      expect(more).toEqual([]);
      expect(file).toMatch(/\/\d{8}T\d{6}Z-\d+\.lp$/);
      const text = readFileSync(file!, 'utf8');
      expect(text).toMatch(/^# svc set these 7 rows of sa\.poison aside .*failpoint flush\.write@poison/);
      const back = parseLineProtocol(text, { precision: 'us', now: 0 });
      expect(back.errors).toEqual([]);
      expect(back.batches[0]!.length).toBe(7);
      expect(text).toContain(`poison,host=h1 v=1,note="${'x'.repeat(400)}" ${(T0 + 1_000_000_000n) / 1000n}\n`);

      // Set aside: not queryable any more, not retried again; the server keeps writing the rest.
      expect(await count(s, 'sa.good')).toBe(5);
      expect((await write(s, 'sa', 'good', 5, 100)).status).toBe(204);
      expect((await flush(s)).status).toBe(200);
      expect(await count(s, 'sa.good')).toBe(10);
      expect(await count(s, 'sa.poison')).toBe(0);
      expect((await stats(s)).flush_failures).toBe(3);
    } finally {
      await s.cleanup();
    }
  }, 60_000);

  test('with the WAL on, a restart does not replay set-aside rows; the file sends them again', async () => {
    const env = { SVC_WAL_ENABLED: 'true', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000', SVC_INGEST_FLUSH_MAX_ATTEMPTS: '2' };
    const s = await startServer({ env: { ...env, SVC_FAILPOINT: 'flush.write@poison' }, keepDir: true });
    dirs.push(s.dir);
    try {
      expect((await write(s, 'sw', 'poison', 4)).status).toBe(204);
      expect((await flush(s)).status).toBe(200);
      expect(await stats(s)).toMatchObject({ set_aside_batches: 1, flush_failures: 2 });
    } finally {
      // A crash, not a clean stop: the release of the set-aside rows' WAL entry must already be on disk.
      await s.kill();
    }
    const again = await startServer({ env, dir: s.dir });
    try {
      expect((await json(again, 'GET', '/api/wal/status')).body.recovery).toMatchObject({ records: 0 });
      expect((await flush(again)).status).toBe(200);
      expect(await stats(again)).toMatchObject({ flushes: 0, set_aside_batches: 0 });
      expect(await count(again, 'sw.poison')).toBe(0);

      const [file] = setAsideFiles(s.dir, 'sw', 'poison');
      const resent = await again.fetch('/api/v1/write/line-protocol?precision=us', { method: 'POST', headers: { 'x-svc-database': 'sw' }, body: readFileSync(file!) });
      expect(resent.status).toBe(204);
      expect(await count(again, 'sw.poison')).toBe(4);
    } finally {
      await again.cleanup();
    }
  }, 60_000);
});

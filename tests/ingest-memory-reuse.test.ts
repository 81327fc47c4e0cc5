/**
 * MessagePack bodies parsed on the event loop reuse the column memory of rows already in Parquet
 * (src/ingest/column-memory.ts). End to end: concurrent writers, small buffers (many flushes) and
 * read-your-writes queries over buffered rows while it happens. Every row's values are a function of
 * its time, so a row whose memory went to a later body while still readable shows up as a mismatch.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { pack } from 'msgpackr';
import { startServer, type TestServer } from './helpers/server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { SVC_INGEST_MAX_BUFFER_SIZE: '6000', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' } });
});
afterAll(() => s.cleanup());

const T0 = 1_700_000_000_000_000; // µs
const vOf = (t: number) => (t % 1000) / 8;
const body = (k: number, rows: number) => {
  const time = Array.from({ length: rows }, (_, i) => T0 + k * 100_000 + i);
  return pack({ m: 'm', columns: { time, host: time.map((t) => `h${t % 13}`), v: time.map((t) => vOf(t) + 0.5), n: time.map((t) => t % 997) } });
};

// Rows, rows whose values do not match their time, and the sum of v.
const CHECK = `SELECT count(*)::DOUBLE AS rows,
  count(*) FILTER (WHERE v <> (epoch_us(time) % 1000) / 8 + 0.5 OR n <> epoch_us(time) % 997 OR host <> 'h' || (epoch_us(time) % 13))::DOUBLE AS bad,
  sum(v)::DOUBLE AS total FROM m`;

async function check(): Promise<{ rows: number; bad: number; total: number }> {
  const res = await s.fetch('/api/v1/query', { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-database': 'reuse' }, body: JSON.stringify({ sql: CHECK }) });
  expect(res.status).toBe(200);
  const [rows, bad, total] = ((await res.json()) as { data: number[][] }).data[0]!;
  return { rows: rows!, bad: bad!, total: total! };
}

const write = async (k: number, rows: number) => {
  const res = await s.fetch('/api/v1/write/msgpack', { method: 'POST', headers: { 'content-type': 'application/msgpack', 'x-svc-database': 'reuse' }, body: body(k, rows) });
  expect(res.status).toBe(204);
  let total = 0;
  for (let i = 0; i < rows; i++) total += vOf(T0 + k * 100_000 + i) + 0.5;
  return total;
};

test('concurrent writes, many flushes and queries over buffered rows: every row intact, none lost', async () => {
  let expectedRows = 1000;
  let expectedTotal = await write(1000, 1000);
  const writers = Array.from({ length: 4 }, async (_, w) => {
    for (let k = w; k < 120; k += 4) {
      const rows = 2000 + ((k * 7919) % 4000);
      const total = await write(k, rows); // awaited first: `x += await` would read x before the await
      expectedTotal += total;
      expectedRows += rows;
    }
  });
  let done = false;
  const readers = (async () => {
    let queries = 0;
    while (!done || queries < 3) {
      expect((await check()).bad).toBe(0);
      queries++;
    }
    return queries;
  })();
  await Promise.all(writers);
  done = true;
  expect(await readers).toBeGreaterThan(2);
  expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
  const after = await check();
  expect(after.rows).toBe(expectedRows);
  expect(after.bad).toBe(0);
  expect(after.total).toBeCloseTo(expectedTotal, 3);
}, 120_000);

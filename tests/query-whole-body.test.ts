/**
 * Result bodies sent whole with a Content-Length (within query.whole_body_memory) and streamed
 * chunked are the same bytes, on every format and at the sizes where batching changes: empty, one
 * row, exactly one batch, a batch plus one row, and a body past the budget (built whole, then handed
 * to a stream).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { tableFromIPC } from 'apache-arrow';
import { startServer, type TestServer } from './helpers/server.ts';

/** Default budget: every result here is sent whole. */
let whole: TestServer;
/** A 1-byte budget: every body streams from its first bytes. */
let streamed: TestServer;
/** A 1 MB budget: a larger body is built whole up to it, then streams. */
let small: TestServer;
beforeAll(async () => {
  [whole, streamed, small] = await Promise.all([
    startServer(),
    startServer({ env: { SVC_QUERY_WHOLE_BODY_MEMORY: '1B' } }),
    startServer({ env: { SVC_QUERY_WHOLE_BODY_MEMORY: '1MB' } }),
  ]);
}, 60_000);
afterAll(() => Promise.all([whole, streamed, small].map((s) => s?.cleanup())));

const ROUTES = ['/api/v1/query/arrow', '/api/v1/query', '/api/v1/query/msgpack'];
/** Rows per Arrow record batch; JSON batches are half of it (16,384 rows). */
const ARROW_BATCH = 32_768;
const sql = (rows: number) =>
  `SELECT i, i * 0.25 AS x, make_timestamp(i * 1000) AS t, CASE WHEN i % 3 = 0 THEN NULL ELSE 'value_' || i END AS s FROM range(${rows}) r(i) ORDER BY i`;

async function body(s: TestServer, route: string, rows: number): Promise<{ bytes: Uint8Array; length: string | null }> {
  // identity: fetch would otherwise ask MessagePack for zstd.
  const r = await s.fetch(route, { method: 'POST', headers: { 'accept-encoding': 'identity' }, body: JSON.stringify({ sql: sql(rows) }) });
  expect(r.status).toBe(200);
  return { bytes: new Uint8Array(await r.arrayBuffer()), length: r.headers.get('content-length') };
}

/** The bytes before the execution time (JSON and MessagePack end with it and a timestamp, which differ per call). */
function stable(route: string, bytes: Uint8Array): Uint8Array {
  if (route.endsWith('arrow')) return bytes;
  const at = Buffer.from(bytes).lastIndexOf('execution_time_ms');
  expect(at).toBeGreaterThan(0);
  return bytes.subarray(0, at);
}

describe('whole and streamed bodies', () => {
  for (const rows of [0, 1, ARROW_BATCH / 2, ARROW_BATCH / 2 + 1, ARROW_BATCH, ARROW_BATCH + 1, 200_000]) {
    test(`${rows} rows: the same bytes sent whole (with a length) and streamed`, async () => {
      for (const route of ROUTES) {
        const a = await body(whole, route, rows);
        const b = await body(streamed, route, rows);
        const c = await body(small, route, rows);
        expect(Number(a.length)).toBe(a.bytes.byteLength);
        // Bun.serve sends a stream that is already complete when it starts reading with a length too;
        // one longer than the 2 MB the stream queues before encoding waits is always chunked.
        if (a.bytes.byteLength > 4 << 20) expect([b.length, c.length]).toEqual([null, null]);
        if (a.bytes.byteLength <= 1 << 20) expect(Number(c.length)).toBe(c.bytes.byteLength);
        expect(Buffer.compare(stable(route, b.bytes), stable(route, a.bytes))).toBe(0);
        expect(Buffer.compare(stable(route, c.bytes), stable(route, a.bytes))).toBe(0);
        if (route.endsWith('arrow')) {
          const table = tableFromIPC(a.bytes);
          expect(table.numRows).toBe(rows);
          if (rows > 0) expect(table.getChild('s')!.get(rows - 1)).toBe((rows - 1) % 3 === 0 ? null : `value_${rows - 1}`);
        }
      }
    });
  }

  test('a body past the budget still arrives whole for a slow reader, and the budget is free again afterwards', async () => {
    const r = await small.fetch('/api/v1/query/arrow', { method: 'POST', body: JSON.stringify({ sql: sql(200_000) }) });
    const reader = r.body!.getReader();
    await Bun.sleep(200);
    const parts: Uint8Array[] = [];
    for (let got = await reader.read(); !got.done; got = await reader.read()) parts.push(got.value);
    const slow = new Uint8Array(await new Blob(parts).arrayBuffer());
    expect(Buffer.compare(slow, (await body(whole, '/api/v1/query/arrow', 200_000)).bytes)).toBe(0);
    // A small result after it is sent whole: nothing of the budget stayed taken.
    expect(Number((await body(small, '/api/v1/query/arrow', 1000)).length)).toBeGreaterThan(0);
  });
});

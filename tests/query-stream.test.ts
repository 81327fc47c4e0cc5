/**
 * Streamed query bodies on a real server: large results cross many batches (and the JSON workers)
 * and still arrive whole and in order; a query failing late is an error response, not a short result.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { tableFromIPC } from 'apache-arrow';
import { startServer, type TestServer } from './helpers/server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.cleanup());

const post = (route: string, sql: string) => s.fetch(route, { method: 'POST', body: JSON.stringify({ sql }) });
const ROWS = 300_000;
const SQL = `SELECT i, make_timestamp(i * 1000) AS t, i / 7 AS x, 'h' || (i % 5) AS h FROM range(${ROWS}) r(i)`;

describe('streamed bodies', () => {
  test('a large JSON result arrives whole and in order', async () => {
    const r = await post('/api/v1/query', SQL);
    expect(r.status).toBe(200);
    // Within query.whole_body_memory: sent whole, with its length (tests/query-whole-body.test.ts compares it with a chunked body).
    expect(Number(r.headers.get('content-length'))).toBeGreaterThan(1_000_000);
    const body = (await r.json()) as { row_count: number; data: unknown[][] };
    expect(body.row_count).toBe(ROWS);
    expect(body.data.length).toBe(ROWS);
    expect(body.data.every((row: unknown[], i: number) => row[0] === i)).toBe(true);
    expect(body.data[123_457]).toEqual([123_457, '1970-01-01T00:02:03.457Z', 123_457 / 7, 'h2']);
    expect(Object.keys(body)).toEqual(['columns', 'types', 'data', 'row_count', 'execution_time_ms', 'success']);
  });

  test('a small result is sent whole, with its length, on all three formats', async () => {
    for (const route of ['/api/v1/query', '/api/v1/query/arrow', '/api/v1/query/msgpack']) {
      // identity: fetch would otherwise ask for zstd and hand back the decoded (different-length) bytes.
      const r = await s.fetch(route, { method: 'POST', headers: { 'accept-encoding': 'identity' }, body: JSON.stringify({ sql: 'SELECT i FROM range(100) r(i)' }) });
      expect(r.status).toBe(200);
      const bytes = await r.arrayBuffer();
      expect(Number(r.headers.get('content-length'))).toBe(bytes.byteLength);
    }
    const json = (await (await post('/api/v1/query', 'SELECT i FROM range(100) r(i)')).json()) as { row_count: number };
    expect(json.row_count).toBe(100);
  });

  test('a large Arrow result is one stream of several record batches', async () => {
    const r = await post('/api/v1/query/arrow', SQL);
    const table = tableFromIPC(new Uint8Array(await r.arrayBuffer()));
    expect(table.numRows).toBe(ROWS);
    expect(table.batches.length).toBeGreaterThan(1);
    expect(Number(table.getChild('i')!.get(ROWS - 1))).toBe(ROWS - 1);
    expect(table.getChild('h')!.get(7)).toBe('h2');
  });

  test('a slow reader gets every batch intact, the same bytes as a fast one (batch memory is reused only once sent)', async () => {
    const sql = `SELECT i, i * 0.5 AS x, CASE WHEN i % 3 = 0 THEN NULL ELSE 'value_' || i END AS s, i % 2 = 0 AS b FROM range(${ROWS}) r(i) ORDER BY i`;
    const slowRead = async (route: string) => {
      const r = await post(route, sql);
      const reader = r.body!.getReader();
      const parts: Uint8Array[] = [];
      // A pause first lets the server fill its queue and block; then small reads with pauses between.
      await Bun.sleep(300);
      for (let got = await reader.read(), n = 0; !got.done; got = await reader.read(), n++) {
        parts.push(got.value);
        if (n % 4 === 0) await Bun.sleep(2);
      }
      return new Uint8Array(await new Blob(parts).arrayBuffer());
    };
    for (const route of ['/api/v1/query/arrow', '/api/v1/query']) {
      const fast = new Uint8Array(await (await post(route, sql)).arrayBuffer());
      const slow = await slowRead(route);
      // JSON ends with the execution time, which differs from call to call (in value and length).
      const end = (b: Uint8Array) => (route.endsWith('arrow') ? b.byteLength : new TextDecoder().decode(b).lastIndexOf('"execution_time_ms"'));
      expect(end(slow)).toBe(end(fast));
      expect(end(fast)).toBeGreaterThan(1_000_000);
      expect(Buffer.compare(slow.subarray(0, end(slow)), fast.subarray(0, end(fast)))).toBe(0);
      if (route.endsWith('arrow')) {
        const table = tableFromIPC(slow);
        expect(table.numRows).toBe(ROWS);
        expect(table.batches.length).toBeGreaterThan(3);
        const [i, x, str, b] = ['i', 'x', 's', 'b'].map((c) => table.getChild(c)!);
        for (let k = 0; k < ROWS; k += 997) {
          expect(Number(i!.get(k))).toBe(k);
          expect(x!.get(k)).toBe(k * 0.5);
          expect(str!.get(k)).toBe(k % 3 === 0 ? null : `value_${k}`);
          expect(b!.get(k)).toBe(k % 2 === 0);
        }
      } else {
        const data = (JSON.parse(new TextDecoder().decode(slow)) as { data: unknown[][] }).data;
        expect(data.length).toBe(ROWS);
        for (let k = 0; k < ROWS; k += 997) expect(data[k]).toEqual([k, k * 0.5, k % 3 === 0 ? null : `value_${k}`, k % 2 === 0]);
      }
    }
  }, 30_000);

  test('an engine error late in a large result is an error response, never a shorter result', async () => {
    const sql = `SELECT CASE WHEN i < 2000000 THEN i ELSE error('boom') END AS v FROM range(3000000) r(i)`;
    for (const route of ['/api/v1/query', '/api/v1/query/arrow', '/api/v1/query/msgpack']) {
      const r = await post(route, sql);
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: string }).error).toContain('boom');
    }
    expect(((await (await post('/api/v1/query', 'SELECT 1 AS one')).json()) as { data: unknown }).data).toEqual([[1]]);
  });
});

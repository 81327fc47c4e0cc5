/**
 * Issue 21, point 1: on a fresh server, NULL-heavy results once made the C JSON writer read string
 * lengths from stale headers under NULL; from then on every large JSON result answered 500 "Out of
 * memory" until restart. The exact sequence of the issue, against a real server, then a large JSON
 * result that must still be 200 and read back whole, and the same bytes as a server with native
 * encoders switched off by config (`query.native_encoders = false`).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startServer, type TestServer } from './helpers/server.ts';

const SEQUENCE = [
  'SELECT CASE WHEN i % 3 = 0 THEN NULL ELSE repeat(chr((97 + i % 26)::INTEGER), ((i * 7919) % 5000)::INTEGER) END AS s, i FROM range(20000) t(i)',
  'SELECT CASE WHEN i % 2 = 0 THEN repeat(chr(120), 100000) ELSE NULL END AS s FROM range(400) t(i)',
  'SELECT NULL::VARCHAR AS s, CASE WHEN i % 5 = 0 THEN NULL ELSE i END AS n FROM range(100000) t(i)',
];
/** A large JSON result after the sequence: strings of every length class among NULLs. */
const LATER = "SELECT CASE WHEN i % 4 = 0 THEN NULL ELSE repeat('é', (i % 40)::INTEGER) END AS s, i FROM range(100000) t(i)";

let native: TestServer;
let plain: TestServer;

beforeAll(async () => {
  [native, plain] = await Promise.all([startServer(), startServer({ env: { SVC_QUERY_NATIVE_ENCODERS: 'false' } })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([native?.cleanup(), plain?.cleanup()]);
}, 60_000);

async function query(s: TestServer, sql: string): Promise<{ status: number; text: string }> {
  const r = await s.fetch('/api/v1/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql }) });
  return { status: r.status, text: await r.text() };
}

/** The body without its timing, which differs between runs. */
const stable = (text: string) => text.replace(/"execution_time_ms":[0-9.e+-]+/, '');

test("the issue's three NULL-heavy queries answer 200, and a later large JSON result is 200 and whole", async () => {
  const rows = [20_000, 400, 100_000];
  for (const [k, sql] of SEQUENCE.entries()) {
    const r = await query(native, sql);
    expect(r.status).toBe(200);
    expect((JSON.parse(r.text) as { row_count: number }).row_count).toBe(rows[k]!);
  }
  const later = await query(native, LATER);
  expect(later.status).toBe(200);
  const body = JSON.parse(later.text) as { data: [string | null, number][]; row_count: number };
  expect(body.row_count).toBe(100_000);
  expect(body.data[4]).toEqual([null, 4]);
  expect(body.data[5]).toEqual(['é'.repeat(5), 5]);
  // The TypeScript path (native encoders off by config) gives the same bytes.
  expect(stable(later.text)).toBe(stable((await query(plain, LATER)).text));
}, 120_000);

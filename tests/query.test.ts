/**
 * The query API end to end on a real server: read-your-writes without a flush, the three formats and
 * their types (golden MessagePack wire names), SHOW, joins across databases, CTEs, the empty-
 * measurement rule, the guard over HTTP, estimate and listing routes, timeouts and slow queries.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { queryArrowWithDuckDB } from './helpers/duckdb-wasm.ts';
import { tableFromIPC } from 'apache-arrow';
import { pack, unpack } from 'msgpackr';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CANARY, HOSTILE_QUERIES } from './helpers/hostile-queries.ts';
import { startServer, type TestServer } from './helpers/server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response shapes are asserted by the tests
const jsonOf = (r: Response): Promise<any> => r.json();

let s: TestServer;
const T = Date.UTC(2024, 0, 1) / 1; // ms

const write = async (db: string, body: unknown) => {
  const r = await s.fetch('/api/v1/write/msgpack', { method: 'POST', headers: { 'content-type': 'application/msgpack', 'x-svc-database': db }, body: pack(body) });
  expect(r.status).toBe(204);
};
const post = (path: string, sql: string, headers: Record<string, string> = {}) =>
  s.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ sql }), decompress: false } as RequestInit);
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response shapes are asserted by the tests
const json = async (sql: string, headers: Record<string, string> = {}): Promise<any> => {
  const r = await post('/api/v1/query', sql, headers);
  const body = await jsonOf(r);
  if (r.status !== 200) throw new Error(`${r.status}: ${body.error}`);
  return body;
};
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response shapes are asserted by the tests
const msgpack = async (sql: string, headers: Record<string, string> = {}): Promise<any> => {
  const r = await post('/api/v1/query/msgpack', sql, headers);
  expect(r.status).toBe(200);
  return unpack(new Uint8Array(await r.arrayBuffer()));
};
const arrow = async (sql: string) => {
  const r = await post('/api/v1/query/arrow', sql);
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toBe('application/vnd.apache.arrow.stream');
  return new Uint8Array(await r.arrayBuffer());
};

beforeAll(async () => {
  // One query connection: a query still running after its client left would block the next one.
  s = await startServer({ env: { SVC_INGEST_MAX_BUFFER_AGE_MS: '3600000', SVC_QUERY_MAX_CONCURRENT: '1' } });
  await write('qa', { m: 'cpu', columns: { time: [T, T + 60_000, T + 3_600_000], host: ['a', 'b', 'a'], usage: [1.5, 2.5, 3.5] } });
  await write('qb', { m: 'mem', columns: { time: [T, T + 3_600_000], host: ['a', 'a'], free: [10, 20] } });
});
afterAll(() => s.cleanup());

describe('read your writes', () => {
  test('buffered rows are queryable before any flush, and exactly once after it', async () => {
    expect((await json('SELECT count(*) AS n FROM qa.cpu')).data).toEqual([[3]]);
    expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
    await write('qa', { m: 'cpu', columns: { time: [T + 7_200_000], host: ['c'], usage: [4.5] } });
    expect((await json('SELECT count(*) AS n, sum(usage) AS s FROM qa.cpu')).data).toEqual([[4, 12]]);
  });
});

describe('formats', () => {
  const TYPES_SQL = `SELECT true AS b, 1::TINYINT AS i8, 2::SMALLINT AS i16, 3::INTEGER AS i32, 9007199254740993::BIGINT AS i64,
    5::UTINYINT AS u8, 6::USMALLINT AS u16, 7::UINTEGER AS u32, 18446744073709551615::UBIGINT AS u64, 1.5::FLOAT AS f32,
    'nan'::DOUBLE AS f64, 'héllo' AS s, 'x'::BLOB AS bl, DATE '2024-01-02' AS d, TIMESTAMP '2024-01-02 03:04:05.123456' AS ts,
    TIMESTAMP_S '2024-01-02 03:04:05' AS ts_s, TIMESTAMP_MS '2024-01-02 03:04:05.123' AS ts_ms, TIMESTAMP_NS '2024-01-02 03:04:05.123456789' AS ts_ns,
    TIMESTAMPTZ '2024-01-02 03:04:05+00' AS tstz, TIME '10:11:12' AS t, INTERVAL 90 MINUTE AS iv, '5f0a0000-0000-4000-8000-000000000000'::UUID AS u,
    [1, 2] AS l, {'k': 1} AS st, MAP {'k': 1} AS mp, 'a'::ENUM('a', 'b') AS e, 12.5::DECIMAL(5,1) AS dec, sum(x) AS huge, NULL::VARCHAR AS nul
    FROM range(3) r(x)`;

  test('MessagePack wire type names (golden)', async () => {
    const r = await msgpack(TYPES_SQL);
    expect(r.types).toEqual([
      'bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'float32', 'float64', 'utf8', 'binary',
      'date32', 'timestamp[us]', 'timestamp[s]', 'timestamp[ms]', 'timestamp[ns]', 'timestamp[us, tz=UTC]', 'string_encoded',
      'string_encoded', 'string_encoded', 'list', 'struct', 'map', "unknown:ENUM('a', 'b')", 'float64', 'int64', 'utf8',
    ]);
    expect(Object.keys(r)).toEqual(['success', 'columns', 'types', 'data', 'row_count', 'execution_time_ms', 'timestamp']);
    const row = (r.data as unknown[][]).map((c) => c[0]);
    expect(row.slice(0, 4)).toEqual([true, 1, 2, 3]);
    expect(BigInt(row[4] as bigint)).toBe(9007199254740993n);
    expect(BigInt(row[8] as bigint)).toBe(18446744073709551615n);
    expect(row[10]).toBeNaN();
    expect(row[11]).toBe('héllo');
    expect(row[13]).toBe(19724);
    expect(Number(row[14])).toBe(Date.UTC(2024, 0, 2, 3, 4, 5) * 1000 + 123456);
    expect(row.slice(19, 26)).toEqual(['10:11:12', '01:30:00', '5f0a0000-0000-4000-8000-000000000000', '[1, 2]', '{\'k\': 1}', '{\'k\': 1}', 'a']);
    expect(row.slice(26)).toEqual([12.5, 3, null]);
    expect(r.row_count).toBe(1);
    expect(Date.parse(r.timestamp)).toBeGreaterThan(0);
  });

  test('strings on every format: empty, inline (12 bytes and less) and stored apart (13 bytes and more), multi-byte, null', async () => {
    const values = ['', 'a', 'twelve_bytes', 'thirteen_byte', 'é'.repeat(6), 'é'.repeat(7), 'x'.repeat(300), null];
    const sql = `SELECT * FROM (VALUES ${values.map((v, i) => `(${i}, ${v === null ? 'NULL' : `'${v}'`})`).join(', ')}) t(i, s) ORDER BY i`;
    expect((await msgpack(sql)).data[1]).toEqual(values);
    const j = (await (await post('/api/v1/query', sql)).json()) as { data: unknown[][] };
    expect(j.data.map((r) => r[1])).toEqual(values);
    const table = tableFromIPC(new Uint8Array(await (await post('/api/v1/query/arrow', sql)).arrayBuffer()));
    expect(table.getChild('s')!.toArray()).toEqual(values);
  });

  test('JSON values: RFC 3339 timestamps, NaN as null, exact big integers, decimals as numbers', async () => {
    const r = await post('/api/v1/query', TYPES_SQL);
    const text = await r.text();
    expect(text).toContain('9007199254740993');
    expect(text).toContain('18446744073709551615');
    const body = JSON.parse(text);
    expect(body.success).toBe(true);
    expect(body.types.slice(0, 5)).toEqual(['BOOLEAN', 'TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT']);
    const row = body.data[0];
    expect(row[10]).toBeNull();
    expect(row.slice(13, 19)).toEqual(['2024-01-02', '2024-01-02T03:04:05.123456Z', '2024-01-02T03:04:05Z', '2024-01-02T03:04:05.123Z', '2024-01-02T03:04:05.123456789Z', '2024-01-02T03:04:05Z']);
    expect(row[23]).toEqual({ k: 1 });
    expect(row.slice(26)).toEqual([12.5, 3, null]);
  });

  test('JSON doubles: one text form (integral as 1.0, exponent without +), NaN and infinities as null, in every column position', async () => {
    // Runs of adjacent float columns are rendered by DuckDB (encode/json-render.ts), split here by other columns.
    const sql = `SELECT 1.0::DOUBLE AS a, 'x' AS s, 1e21::DOUBLE AS b, 1e-7::DOUBLE AS c, '-0.0'::DOUBLE AS d, 0.3::FLOAT AS f, 2 AS i,
      'nan'::DOUBLE AS n, '-inf'::DOUBLE AS ni, NULL::DOUBLE AS nu, 123456789012345678::DOUBLE AS big`;
    const text = await (await post('/api/v1/query', sql)).text();
    expect(text).toContain('"data":[[1.0,"x",1e21,1e-7,-0.0,0.30000001192092896,2,null,null,null,123456789012345680.0]]');
    const body = JSON.parse(text);
    expect(body.columns).toEqual(['a', 's', 'b', 'c', 'd', 'f', 'i', 'n', 'ni', 'nu', 'big']);
    expect(body.types).toEqual(['DOUBLE', 'VARCHAR', 'DOUBLE', 'DOUBLE', 'DOUBLE', 'FLOAT', 'INTEGER', 'DOUBLE', 'DOUBLE', 'DOUBLE', 'DOUBLE']);
  });

  test('JSON over many chunks: ORDER BY kept, doubles and long strings equal to MessagePack, stored and buffered rows alike', async () => {
    const n = 6000;
    const time = Array.from({ length: n }, (_, i) => T + i * 1000);
    const v = Array.from({ length: n }, (_, i) => Math.sin(i) * 10 ** ((i % 13) - 6));
    const w = Array.from({ length: n }, (_, i) => (i % 7 === 0 ? i : i / 3));
    const note = Array.from({ length: n }, (_, i) => `note ${i} `.repeat(1 + (i % 9)));
    await write('qr', { m: 'many', columns: { time, v, w, note } });
    const check = async () => {
      const sql = 'SELECT time, v, note, w FROM qr.many ORDER BY v DESC';
      const j = await json(sql);
      const m = await msgpack(sql);
      expect(j.row_count).toBe(n);
      const vs = j.data.map((r: unknown[]) => r[1] as number);
      expect(vs).toEqual([...v].sort((a, b) => b - a));
      expect(vs).toEqual(m.data[1]);
      expect(j.data.map((r: unknown[]) => r[2])).toEqual(m.data[2]);
      expect(j.data.map((r: unknown[]) => r[3])).toEqual(m.data[3]);
    };
    await check();
    expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
    await check();
  });

  test('Arrow IPC: readable by apache-arrow with the same normalisation', async () => {
    const t = tableFromIPC(await arrow(TYPES_SQL.replace("'x'::BLOB AS bl, ", '')));
    expect(t.numRows).toBe(1);
    const types = Object.fromEntries(t.schema.fields.map((f) => [f.name, String(f.type)]));
    expect(types).toMatchObject({ b: 'Bool', i64: 'Int64', u64: 'Uint64', f64: 'Float64', s: 'Utf8', d: 'Date32<DAY>', ts: 'Timestamp<MICROSECOND>', tstz: 'Timestamp<MICROSECOND, UTC>', dec: 'Float64', huge: 'Int64', l: 'Utf8' });
    const row = t.get(0)!.toJSON();
    expect(row.i64).toBe(9007199254740993n);
    expect(row.s).toBe('héllo');
    expect(row.dec).toBe(12.5);
    expect(row.huge).toBe(3n);
    expect(row.nul).toBeNull();
  });

  test('Arrow IPC: readable by DuckDB itself (DuckDB-WASM, Arrow C++ IPC reader)', async () => {
    const small = await queryArrowWithDuckDB(await arrow('SELECT time, host, usage FROM qa.cpu ORDER BY time'), 'SELECT count(*) AS n, sum(usage) AS s, min(time)::VARCHAR AS t0 FROM t');
    expect(small).toEqual([{ n: 4n, s: 12, t0: '2024-01-01 00:00:00' }]);
    // Several record batches, nulls, strings longer than DuckDB's 12-byte inline form, booleans, decimals.
    const sql = `SELECT i, CASE WHEN i % 7 = 0 THEN NULL ELSE 'a-much-longer-string-' || i END AS s, i % 2 = 0 AS even,
                 CASE WHEN i % 5 = 0 THEN NULL ELSE i * 0.5 END AS half, (i * 3)::DECIMAL(10, 0) AS d FROM range(5000) r(i)`;
    const rows = await queryArrowWithDuckDB(
      await arrow(sql),
      'SELECT count(*) AS n, count(s) AS ns, sum(length(s))::BIGINT AS len, sum(CASE WHEN even THEN 1 ELSE 0 END)::BIGINT AS evens, count(half) AS nh, sum(half)::DOUBLE AS sh, sum(d)::DOUBLE AS sd FROM t',
    );
    const expected = { n: 5000n, ns: 5000n - 715n, evens: 2500n, nh: 4000n };
    expect(rows[0]).toMatchObject(expected);
    expect(Number(rows[0]!.sd)).toBe(3 * (4999 * 5000) / 2);
    expect(Number(rows[0]!.sh)).toBe([...Array(5000).keys()].filter((i) => i % 5 !== 0).reduce((a, i) => a + i * 0.5, 0));
    expect(Number(rows[0]!.len)).toBe([...Array(5000).keys()].filter((i) => i % 7 !== 0).reduce((a, i) => a + `a-much-longer-string-${i}`.length, 0));
  });

  test('Arrow IPC of measurement rows, with nulls', async () => {
    const t = tableFromIPC(await arrow("SELECT time, host, CASE WHEN host = 'b' THEN NULL ELSE usage END AS usage FROM qa.cpu ORDER BY time"));
    expect(t.toArray().map((r) => [r.host, r.usage])).toEqual([['a', 1.5], ['b', null], ['a', 3.5], ['c', 4.5]]);
  });

  test('MessagePack: zstd when asked, profile only with x-svc-profile', async () => {
    const r = await post('/api/v1/query/msgpack', 'SELECT host FROM qa.cpu ORDER BY time', { 'accept-encoding': 'zstd', 'x-svc-profile': 'true' });
    expect(r.headers.get('content-encoding')).toBe('zstd');
    const body = unpack(Bun.zstdDecompressSync(new Uint8Array(await r.arrayBuffer())));
    expect(body.data).toEqual([['a', 'b', 'a', 'c']]);
    expect(body.profile).toMatchObject({ files: expect.any(Number), buffered_rows: expect.any(Number) });
  });
});

describe('SQL', () => {
  test('joins across databases, CTEs, bare names with x-svc-database', async () => {
    const j = await json('SELECT c.host, c.usage, m.free FROM qa.cpu c JOIN qb.mem m ON c.time = m.time ORDER BY c.time');
    expect(j.data).toEqual([['a', 1.5, 10], ['a', 3.5, 20]]);
    const cte = await json("WITH a AS (SELECT host, usage FROM cpu WHERE time >= '2024-01-01 00:30:00') SELECT count(*), sum(usage) FROM a", { 'x-svc-database': 'qa' });
    expect(cte.data).toEqual([[2, 8]]);
    const left = await json('SELECT count(*) FROM qa.cpu c LEFT JOIN qb.mem m USING (time) WHERE m.free IS NULL');
    expect(left.data).toEqual([[2]]);
  });

  test('engine errors carry the engine text: 400 for the query, never a 500', async () => {
    const r = await post('/api/v1/query', 'SELECT nope FROM qa.cpu');
    expect(r.status).toBe(400);
    expect((await jsonOf(r)).error).toMatch(/^Binder Error: .*nope/);
    const p = await post('/api/v1/query', 'SELEC 1');
    expect(p.status).toBe(400);
    expect((await jsonOf(p)).error).toMatch(/Parser Error/);
  });

  test('a measurement that does not exist: 200 with zero rows on every format', async () => {
    expect(await json('SELECT * FROM qa.nothing')).toMatchObject({ columns: ['time'], data: [], row_count: 0 });
    expect(await msgpack('SELECT * FROM qa.nothing')).toMatchObject({ columns: ['time'], data: [[]], row_count: 0 });
    const t = tableFromIPC(await arrow('SELECT * FROM nodb.nothing'));
    expect(t.numRows).toBe(0);
    expect(t.schema.fields.map((f) => f.name)).toEqual(['time']);
  });

  test('SHOW on JSON and MessagePack; Arrow refuses it pointing to /api/v1/query', async () => {
    expect((await json('SHOW DATABASES')).data).toEqual(expect.arrayContaining([['qa'], ['qb']]));
    expect((await json('SHOW MEASUREMENTS FROM qa')).data).toEqual([['qa', 'cpu']]);
    expect((await msgpack('SHOW TABLES', { 'x-svc-database': 'qb' })).data).toEqual([['qb'], ['mem']]);
    expect((await json('DESCRIBE qa.cpu')).data).toEqual([['time', 'TIMESTAMP'], ['host', 'VARCHAR'], ['usage', 'DOUBLE']]);
    expect((await json('SHOW COLUMNS FROM mem', { 'x-svc-database': 'qb' })).data.map((r: string[]) => r[0])).toEqual(['time', 'host', 'free']);
    const r = await post('/api/v1/query/arrow', 'SHOW TABLES');
    expect(r.status).toBe(400);
    expect((await jsonOf(r)).error).toContain('/api/v1/query');
  });

  test(`the guard refuses ${HOSTILE_QUERIES.length} hostile queries with 400 and reads no file`, async () => {
    const canary = join(s.dir, 'canary.csv');
    writeFileSync(canary, 'CANARY-CONTENT-91b2\n');
    const before = statSync(canary).atimeMs;
    for (const [label, q] of HOSTILE_QUERIES) {
      const r = await post('/api/v1/query', q.replaceAll(CANARY, canary));
      const body = await jsonOf(r);
      expect(r.status, `${label}: ${body.error}`).toBe(400);
      expect(body.error).not.toContain('CANARY-CONTENT');
    }
    expect(statSync(canary).atimeMs).toBe(before);
  });
});

describe('other routes', () => {
  test('estimate, measurements, GET /api/v1/query/:measurement', async () => {
    const e = await jsonOf(await post('/api/v1/query/estimate', "SELECT * FROM qa.cpu WHERE time >= '2024-01-01 00:30:00'"));
    expect(e).toMatchObject({ success: true, measurements: [{ database: 'qa', measurement: 'cpu', min_time: '2024-01-01T00:30:00.000Z', max_time: null }] });
    expect(e.estimated_rows).toBeGreaterThanOrEqual(2);
    const m = await jsonOf(await s.fetch('/api/v1/measurements?db=qa'));
    expect(m.measurements).toEqual([{ database: 'qa', name: 'cpu' }]);
    const g = await jsonOf(await s.fetch('/api/v1/query/cpu?database=qa&limit=2&order=asc&start=2024-01-01T00:00:30Z'));
    expect(g.data.map((r: unknown[]) => r[1])).toEqual(['b', 'a']);
  });
});

describe('cancellation', () => {
  test('a client that disconnects cancels its query', async () => {
    const ac = new AbortController();
    const slow = s.fetch('/api/v1/query', { method: 'POST', signal: ac.signal, body: JSON.stringify({ sql: 'SELECT count(*) FROM range(100000000) a, range(1000) b WHERE a.range * b.range = 7' }) });
    await Bun.sleep(200);
    ac.abort();
    await slow.catch(() => undefined);
    const started = performance.now();
    expect((await json('SELECT 1 AS one')).data).toEqual([[1]]);
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

describe('limits', () => {
  let slow: TestServer;
  beforeAll(async () => {
    slow = await startServer({ env: { SVC_QUERY_TIMEOUT: '300ms', SVC_QUERY_SLOW_QUERY_THRESHOLD_MS: '1' } });
  });
  afterAll(() => slow.cleanup());

  test('query.timeout answers 504 and counts it; slow queries are counted', async () => {
    const r = await slow.fetch('/api/v1/query', { method: 'POST', body: JSON.stringify({ sql: 'SELECT count(*) FROM range(100000000) a, range(1000) b WHERE a.range * b.range = 7' }) });
    expect(r.status).toBe(504);
    expect((await jsonOf(r)).error).toMatch(/query\.timeout/);
    const ok = await slow.fetch('/api/v1/query', { method: 'POST', body: JSON.stringify({ sql: 'SELECT 1' }) });
    expect(ok.status).toBe(200);
    const metrics = await (await slow.fetch('/metrics')).text();
    expect(metrics).toMatch(/svc_query_timeouts_total 1\b/);
    expect(metrics).toMatch(/svc_slow_queries_total [1-9]/);
  });
});

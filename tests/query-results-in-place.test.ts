/**
 * Query results read in place (src/duckdb/result-chunks.ts) against the same results copied through
 * node-api (query.native_encoders = false): two real servers over the same data answer every format byte for
 * byte alike, over many chunks, every column kind, nulls, short and long strings, stored and buffered rows.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { pack, unpack } from 'msgpackr';
import { startServer, type TestServer } from './helpers/server.ts';

let inPlace: TestServer;
let copied: TestServer;
const T = Date.UTC(2024, 0, 1);
const ROWS = 5000;

const write = async (s: TestServer, body: unknown) => {
  const r = await s.fetch('/api/v1/write/msgpack', { method: 'POST', headers: { 'content-type': 'application/msgpack', 'x-svc-database': 'ip' }, body: pack(body) });
  expect(r.status).toBe(204);
};

const post = async (s: TestServer, path: string, sql: string) => {
  const r = await s.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-database': 'ip' }, body: JSON.stringify({ sql }) });
  const bytes = new Uint8Array(await r.arrayBuffer());
  if (r.status !== 200) throw new Error(`${path} ${r.status}: ${new TextDecoder().decode(bytes)}`);
  return bytes;
};

beforeAll(async () => {
  [inPlace, copied] = await Promise.all([
    startServer({ env: { SVC_INGEST_MAX_BUFFER_AGE_MS: '3600000' } }),
    startServer({ env: { SVC_INGEST_MAX_BUFFER_AGE_MS: '3600000', SVC_QUERY_NATIVE_ENCODERS: 'false' } }),
  ]);
  const columns = {
    time: Array.from({ length: ROWS }, (_, i) => T + i * 1000),
    host: Array.from({ length: ROWS }, (_, i) => (i % 5 === 0 ? `a host name longer than twelve bytes ${i}` : `h${i % 7}`)),
    v: Array.from({ length: ROWS }, (_, i) => i * 0.25),
  };
  for (const s of [inPlace, copied]) {
    // One hour is flushed to a file, the next stays buffered: a query reads both.
    await write(s, { m: 'cpu', columns: { time: columns.time.slice(0, 3000), host: columns.host.slice(0, 3000), v: columns.v.slice(0, 3000) } });
    expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
    await write(s, { m: 'cpu', columns: { time: columns.time.slice(3000), host: columns.host.slice(3000), v: columns.v.slice(3000) } });
  }
});
afterAll(async () => {
  await Promise.all([inPlace?.cleanup(), copied?.cleanup()]);
});

test('the default server reads results in place, the other copies them', () => {
  expect(inPlace.output()).toContain('read in place');
  expect(copied.output()).toContain('copied through node-api');
});

const QUERIES = [
  'SELECT * FROM cpu ORDER BY time',
  `SELECT i, (i % 100)::TINYINT AS t8, (i % 200)::UTINYINT AS u8, (i * 3)::SMALLINT AS s16, i::UINTEGER AS u32, i::HUGEINT * 1000000000000 AS huge,
     CASE WHEN i % 3 = 0 THEN NULL ELSE i * 0.5 END AS d, (i / 7)::FLOAT AS f, i % 2 = 0 AS b, (i * 1.25)::DECIMAL(10, 2) AS dec2,
     (i * 10)::DECIMAL(18, 0) AS dec0, DATE '2024-01-01' + (i % 400)::INTEGER AS day, make_timestamp(i::BIGINT * 1000003) AS ts,
     CASE WHEN i % 4 = 0 THEN NULL WHEN i % 4 = 1 THEN '' WHEN i % 4 = 2 THEN 'twelve bytes' ELSE 'thirteen bytes and then some more ' || i END AS s,
     ('x' || i)::BLOB AS bl, CASE WHEN i % 5 = 0 THEN NULL ELSE [i, i + 1] END AS lst, {'a': i, 'b': 's' || i} AS st, NULL AS n
   FROM range(${ROWS}) r(i) ORDER BY i`,
  'SELECT CASE WHEN i % 3 = 0 THEN NULL ELSE i % 2 = 0 END AS b, CASE WHEN i % 4 = 0 THEN NULL ELSE i::BIGINT END AS n, CASE WHEN i % 6 = 0 THEN NULL ELSE i * 0.5 END AS d FROM range(5000) r(i) ORDER BY i',
  // Every kind the C JSON writer takes (json-native.ts), at its edges: integer extremes, timestamps of
  // every unit around the epoch and past 2^53 microseconds, years it hands back (past 9999, before 0,
  // infinities), strings needing every escape, doubles that are not finite.
  `SELECT i, (i % 256 - 128)::TINYINT AS t8, (i * 13 % 65536 - 32768)::SMALLINT AS s16, (i * 1000003 % 4294967296 - 2147483648)::INTEGER AS s32,
     (i % 256)::UTINYINT AS u8, (i * 7 % 65536)::USMALLINT AS u16, (i * 1000003 % 4294967296)::UINTEGER AS u32,
     [-9223372036854775808, 9223372036854775807, -9007199254740993, 9007199254740993, 0, -1][1 + i % 6]::BIGINT AS s64,
     [18446744073709551615, 9007199254740993, 0][1 + i % 3]::UBIGINT AS u64,
     make_timestamp((i - 2500)::BIGINT * 1234567891) AS ts_us, make_timestamp(9007199254740993 + i * 1000001) AS ts_far,
     epoch_ms((i - 2500)::BIGINT * 12345678)::TIMESTAMP_MS AS ts_ms, to_timestamp((i - 2500) * 86399)::TIMESTAMP_S AS ts_s,
     make_timestamp_ns((i - 2500)::BIGINT * 1234567891234) AS ts_ns, make_timestamp((i - 2500)::BIGINT * 999999)::TIMESTAMPTZ AS ts_tz,
     CASE i % 50 WHEN 0 THEN 'infinity'::TIMESTAMP WHEN 1 THEN '-infinity'::TIMESTAMP WHEN 2 THEN '10000-01-01'::TIMESTAMP WHEN 3 THEN '0001-01-01 00:00:00.5'::TIMESTAMP
       WHEN 4 THEN '-0044-03-15 12:00:00'::TIMESTAMP ELSE make_timestamp(i::BIGINT * 1000) END AS ts_edge,
     CASE i % 40 WHEN 0 THEN 'infinity'::DATE WHEN 1 THEN '-infinity'::DATE WHEN 2 THEN '12000-02-29'::DATE WHEN 3 THEN '0000-02-29'::DATE ELSE DATE '1969-12-31' + (i * 37 - 90000)::INTEGER END AS day,
     (i - 2500)::DECIMAL(4, 0) AS dec4, (i * 1000 - 2500000)::DECIMAL(9, 0) AS dec9, (i::BIGINT * 1000000007 - 2500000000000)::DECIMAL(18, 0) AS dec18,
     CASE i % 9 WHEN 0 THEN NULL WHEN 1 THEN 'quote " and \\ back' WHEN 2 THEN chr(1) || chr(8) || chr(9) || chr(10) || chr(12) || chr(13) || chr(31) || chr(127)
       WHEN 3 THEN 'é — 日本 ' || i WHEN 4 THEN repeat('"', 20) WHEN 5 THEN 'a long one with a tab' || chr(9) || ' in the middle ' || i ELSE 'h' || (i % 13) END AS s,
     CASE i % 7 WHEN 0 THEN 'nan'::DOUBLE WHEN 1 THEN 'inf'::DOUBLE WHEN 2 THEN '-inf'::DOUBLE WHEN 3 THEN NULL ELSE i / 7 END AS d1,
     i * 0.1 AS d2, (i / 3)::FLOAT AS f, i % 2 = 0 AS b, NULL AS n
   FROM range(${ROWS}) r(i) ORDER BY i`,
];

/** A JSON body's text without its timing: compared as text, so every byte of every number counts. */
const stableJson = (b: Uint8Array) => new TextDecoder().decode(b).replace(/"execution_time_ms":[0-9.e+-]+/, '"execution_time_ms":0');
const stableMsgpack = (b: Uint8Array) => {
  const { execution_time_ms: _, timestamp: __, ...rest } = unpack(b);
  return rest;
};

for (const sql of QUERIES) {
  test(`every format answers alike: ${sql.slice(0, 60)}`, async () => {
    const a = await post(inPlace, '/api/v1/query/arrow', sql);
    expect(a).toEqual(await post(copied, '/api/v1/query/arrow', sql));
    const j = stableJson(await post(inPlace, '/api/v1/query', sql));
    expect(JSON.parse(j).row_count).toBe(ROWS);
    expect(j).toBe(stableJson(await post(copied, '/api/v1/query', sql)));
    const m = stableMsgpack(await post(inPlace, '/api/v1/query/msgpack', sql));
    expect(m.row_count).toBe(ROWS);
    expect(m).toEqual(stableMsgpack(await post(copied, '/api/v1/query/msgpack', sql)));
  });
}

test('a small result read again skips the rendering of its doubles and answers the same bytes', async () => {
  // The first run renders the doubles in DuckDB (encode/json-render.ts); the server then knows the
  // result is small and the next runs format them in the encoder. SQL over stored files alone is
  // remembered (buffered rows change), so this one reads no measurement.
  const sql = `SELECT i, i / 7 AS a, i / 0.0 AS inf, -0.0::DOUBLE AS negzero,
      CASE i % 5 WHEN 1 THEN 'nan'::DOUBLE WHEN 2 THEN 1e21 WHEN 3 THEN 5e-324 WHEN 4 THEN 1e-7 ELSE NULL END AS odd,
      (i / 3)::FLOAT AS f, pow(10, i - 150) AS wide, 'x' || i AS s
    FROM range(300) r(i) ORDER BY i`;
  for (const s of [inPlace, copied]) {
    const runs: string[] = [];
    for (let i = 0; i < 3; i++) runs.push(stableJson(await post(s, '/api/v1/query', sql)));
    expect(runs[1]).toBe(runs[0]);
    expect(runs[2]).toBe(runs[0]);
    expect(JSON.parse(runs[0]!).row_count).toBe(300);
    expect(runs[0]).toContain('[3,0.42857142857142855,Infinity'.replace('Infinity', 'null'));
    expect(runs[0]).toContain('1e21');
  }
});

test('columns learned on a MessagePack run serve later runs of the same SQL in every format alike', async () => {
  // The first run on `inPlace` is MessagePack, so its JSON run reuses the columns (and the row
  // count) learned there; `copied` answers JSON first, the usual way. Both must agree byte for byte.
  const sql = `SELECT i, i / 7 AS a, 'x' || i AS s, make_timestamp(i::BIGINT * 1000000) AS t, (i * 10)::DECIMAL(18, 0) AS d
    FROM range(40) r(i) ORDER BY i`;
  const first = unpack(await post(inPlace, '/api/v1/query/msgpack', sql));
  expect(first.types).toEqual(['int64', 'float64', 'utf8', 'timestamp[us]', 'int64']);
  const json = stableJson(await post(inPlace, '/api/v1/query', sql));
  expect(json).toBe(stableJson(await post(copied, '/api/v1/query', sql)));
  expect(JSON.parse(json).data[3]).toEqual([3, 3 / 7, 'x3', '1970-01-01T00:00:03Z', 30]);
  const again = unpack(await post(inPlace, '/api/v1/query/msgpack', sql));
  expect({ ...again, timestamp: 0, execution_time_ms: 0 }).toEqual({ ...first, timestamp: 0, execution_time_ms: 0 });
});

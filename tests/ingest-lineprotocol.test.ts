/** Line-protocol writes end to end on /write, /api/v2/write and /api/v1/write/line-protocol. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { gzipSync } from 'node:zlib';
import { dataFiles, queryFiles } from './helpers/parquet.ts';
import { startServer, type TestServer } from './helpers/server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response shapes are asserted by the tests
const jsonOf = (r: Response): Promise<any> => r.json();

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' } });
});
afterAll(() => s.cleanup());

const T_S = 1_700_000_000; // 2023-11-14T22:13:20Z
const post = (path: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
  s.fetch(path, { method: 'POST', headers: { 'content-type': 'text/plain', ...headers }, body });
const flush = async () => expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
const times = async (db: string, m: string) =>
  (await queryFiles(s.dir, `SELECT epoch_ms(time)::DOUBLE AS t FROM $files(${db}/${m}/**/*.parquet) ORDER BY time`)).map((r) => r.t);

describe('line-protocol write', () => {
  test('the three routes with every precision', async () => {
    const cases: [string, string, Record<string, string>][] = [
      ['/write?db=lp1&precision=s', `m1,host=a v=1 ${T_S}`, {}],
      ['/write?db=lp1&precision=ms', `m1,host=a v=2 ${T_S}001`, {}],
      ['/write?precision=us', `m1,host=a v=3 ${T_S}002000`, { 'x-svc-database': 'lp1' }],
      ['/api/v2/write?bucket=lp1&org=ignored&precision=ns', `m1,host=a v=4 ${T_S}003000000`, {}],
      ['/api/v2/write?bucket=lp1/autogen', `m1,host=a v=5 ${T_S}004000000`, {}],
      ['/api/v1/write/line-protocol?precision=s', `m1,host=a v=6 ${T_S + 1}`, { 'x-svc-database': 'lp1' }],
      ['/write?db=lp1&rp=whatever&precision=n', `m1,host=a v=7 ${T_S}005000000`, {}],
    ];
    for (const [path, body, headers] of cases) {
      const res = await post(path, body, headers);
      expect({ path, status: res.status, body: await res.text() }).toEqual({ path, status: 204, body: '' });
    }
    await flush();
    const ms = T_S * 1000;
    expect(await times('lp1', 'm1')).toEqual([ms, ms + 1, ms + 2, ms + 3, ms + 4, ms + 5, ms + 1000]);
  });

  test('types, escapes, NULLs for missing fields, tags recorded', async () => {
    const body = [
      '# a comment',
      '',
      `weather,city=New\\ York,kind=a\\,b temp=21.5,count=3i,ok=true,note="say \\"hi\\"" ${T_S}000000000`,
      `weather,city=Oslo temp=-4,big=42u ${T_S}000000001`,
      `weather,city=Oslo ok=F ${T_S}000000002\r`,
    ].join('\n');
    expect((await post('/write?db=lp2', body)).status).toBe(204);
    await flush();
    const got = await queryFiles(s.dir, `SELECT city, kind, temp, count, ok, note FROM $files(lp2/**/*.parquet) ORDER BY time`);
    expect(got).toEqual([
      { city: 'New York', kind: 'a,b', temp: 21.5, count: 3n, ok: true, note: 'say "hi"' },
      { city: 'Oslo', kind: null, temp: -4, count: null, ok: null, note: null },
      { city: 'Oslo', kind: null, temp: null, count: null, ok: false, note: null },
    ]);
    const file = dataFiles(s.dir).find((f) => f.startsWith('lp2/'))!;
    const kv = await queryFiles(s.dir, `SELECT decode(value) AS v FROM parquet_kv_metadata('${s.dir}/data/svc/${file}') WHERE decode(key) = 'tags'`);
    expect(JSON.parse(String(kv[0]!.v)).sort()).toEqual(['city', 'kind']);
  });

  test('partial write: good lines written, 400 names the first bad line; no good line writes nothing', async () => {
    const res = await post('/write?db=lp3&precision=s', `m,t=a v=1 ${T_S}\nm,t=a v= ${T_S}\nm,t=b v=2 ${T_S + 1}\nnot a line\n`);
    expect(res.status).toBe(400);
    const err = await jsonOf(res);
    expect(err.error).toContain('line 2');
    expect(err.line).toBe(2);
    expect(err.written).toBe(2);
    const none = await post('/write?db=lp4', 'garbage\nmore garbage');
    expect(none.status).toBe(400);
    expect((await jsonOf(none)).error).toMatch(/nothing written.*line 1/);
    await flush();
    expect(await times('lp3', 'm')).toEqual([T_S * 1000, (T_S + 1) * 1000]);
    expect(dataFiles(s.dir).filter((f) => f.startsWith('lp4/'))).toEqual([]);
  });

  test('a large body (parsed by a parse worker): partial write, rows readable before and after the flush', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 3000; i++) lines.push(i === 2000 ? `big,host=h v=oops ${T_S + i}` : `big,host=host_${i % 50},dc=a\\ b v=${i}.5,n=${i}i,ok=${i % 2 ? 't' : 'f'} ${T_S + i}`);
    const body = lines.join('\n');
    expect(body.length).toBeGreaterThan(64 * 1024);
    const res = await post('/write?db=lpbig&precision=s', body);
    expect(res.status).toBe(400);
    const err = await jsonOf(res);
    expect(err.error).toContain('line 2001');
    expect({ line: err.line, written: err.written, rejected: err.rejected }).toEqual({ line: 2001, written: 2999, rejected: 1 });
    const sql = async () => {
      const r = await s.fetch('/api/v1/query', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-database': 'lpbig' },
        body: JSON.stringify({ sql: "SELECT count(*) AS n, sum(v) AS v, sum(n) AS i, count(*) FILTER (WHERE ok) AS ok, count(DISTINCT host) AS hosts, min(dc) AS dc FROM big" }),
      });
      expect(r.status).toBe(200);
      const b = await jsonOf(r);
      return Object.fromEntries((b.columns as string[]).map((c, i) => [c, Number.isFinite(Number(b.data[0][i])) ? Number(b.data[0][i]) : b.data[0][i]]));
    };
    // Every line but number 2001 (i = 2000, even, so not an ok one): sum(i + 0.5), sum(i), odd i.
    const expected = { n: 2999, v: (2999 * 3000) / 2 - 2000 + 2999 * 0.5, i: (2999 * 3000) / 2 - 2000, ok: 1500, hosts: 50, dc: 'a b' };
    expect(await sql()).toEqual(expected); // from the buffers
    await flush();
    expect(await sql()).toEqual(expected); // from Parquet
  });

  test('database rules: missing db on /write is 400, invalid and reserved names are 400', async () => {
    expect((await post('/write', `m v=1`)).status).toBe(400);
    expect((await post('/api/v2/write', `m v=1`)).status).toBe(400);
    for (const path of ['/write?db=_internal', '/write?db=9x', '/api/v2/write?bucket=..%2Fetc']) {
      const res = await post(path, 'm v=1');
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
    }
    expect((await post('/api/v1/write/line-protocol', 'm v=1', { 'x-svc-database': 'bad name' })).status).toBe(400);
    expect((await post('/write?db=lp5&precision=h', 'm v=1')).status).toBe(400);
  });

  test('gzip body; stats and health', async () => {
    expect((await post('/api/v1/write/line-protocol', gzipSync(`gz v=1 ${T_S}000000000`), { 'x-svc-database': 'lp6', 'content-encoding': 'gzip' })).status).toBe(204);
    await flush();
    expect(await times('lp6', 'gz')).toEqual([T_S * 1000]);
    const stats = await jsonOf(await s.fetch('/api/v1/write/line-protocol/stats'));
    expect(stats.records).toBeGreaterThan(0);
    expect(stats.rejected_lines).toBeGreaterThan(0);
    const health = await jsonOf(await s.fetch('/api/v1/write/line-protocol/health'));
    expect(health.status).toBe('healthy');
  });
});

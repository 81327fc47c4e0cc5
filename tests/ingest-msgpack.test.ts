/** MessagePack writes end to end: payload shapes, time units, compression, names, files on disk. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { pack } from 'msgpackr';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { dataFiles, queryFiles } from './helpers/parquet.ts';
import { startServer, type TestServer } from './helpers/server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response shapes are asserted by the tests
const jsonOf = (r: Response): Promise<any> => r.json();

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' } });
});
afterAll(() => s.cleanup());

const T_MS = 1_700_000_000_000; // 2023-11-14T22:13:20Z
const post = (db: string, body: Uint8Array, headers: Record<string, string> = {}) =>
  s.fetch('/api/v1/write/msgpack', { method: 'POST', headers: { 'content-type': 'application/msgpack', 'x-svc-database': db, ...headers }, body });
const flush = async () => expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
const rows = (db: string, m: string, cols = '*') => queryFiles(s.dir, `SELECT ${cols} FROM $files(${db}/${m}/**/*.parquet) ORDER BY time`);

describe('MessagePack write', () => {
  test('columnar map: 204, one file in the UTC hour folder, rows sorted, types kept', async () => {
    const res = await post('mp1', pack({ m: 'cpu', columns: { time: [T_MS + 2000, T_MS, T_MS + 1000], host: ['a', 'b', 'c'], usage: [0.5, 0.25, 1.5], n: [1, 2, 3], ok: [true, false, true] } }));
    expect(res.status).toBe(204);
    await flush();
    const files = dataFiles(s.dir).filter((f) => f.startsWith('mp1/'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^mp1\/cpu\/2023\/11\/14\/22\/cpu_\d{8}_\d{6}_\d{9}\.parquet$/);
    // Read the file in its own row order (no ORDER BY): the writer must have sorted it.
    const got = await queryFiles(s.dir, `SELECT epoch_ms(time) AS t, host, usage, n, ok FROM $files(mp1/**/*.parquet)`);
    expect(got).toEqual([
      { t: BigInt(T_MS), host: 'b', usage: 0.25, n: 2n, ok: false },
      { t: BigInt(T_MS + 1000), host: 'c', usage: 1.5, n: 3n, ok: true },
      { t: BigInt(T_MS + 2000), host: 'a', usage: 0.5, n: 1n, ok: true },
    ]);
    const kv = await queryFiles(s.dir, `SELECT decode(value) AS v FROM parquet_kv_metadata('${s.dir}/data/svc/${files[0]}') WHERE decode(key) = 'tags'`);
    expect(JSON.parse(String(kv[0]!.v))).toEqual(['host']);
  });

  test('array, {batch}, and row forms are accepted', async () => {
    const a = { m: 'shape', columns: { time: [T_MS], v: [1] } };
    const row = { m: 'shape', t: T_MS + 3, tags: { host: 'r' }, fields: { v: 4 } };
    expect((await post('mp2', pack([a, { m: 'shape', columns: { time: [T_MS + 1], v: [2] } }]))).status).toBe(204);
    expect((await post('mp2', pack({ batch: [{ m: 'shape', columns: { time: [T_MS + 2], v: [3] } }] }))).status).toBe(204);
    expect((await post('mp2', pack(row))).status).toBe(204);
    await flush();
    expect((await rows('mp2', 'shape', 'v, host')).map((r) => [Number(r.v), r.host])).toEqual([[1, null], [2, null], [3, null], [4, 'r']]);
  });

  test('time unit is detected per column from magnitude; missing time means now', async () => {
    const sec = T_MS / 1000;
    for (const [unit, t] of [['s', sec], ['ms', T_MS], ['us', T_MS * 1000], ['ns', BigInt(T_MS) * 1_000_000n]] as const)
      expect((await post('mp3', pack({ m: 'units', columns: { time: [t], unit: [unit] } }))).status).toBe(204);
    const before = Date.now();
    expect((await post('mp3', pack({ m: 'now', columns: { v: [1, 2] } }))).status).toBe(204);
    await flush();
    expect((await rows('mp3', 'units', 'epoch_ms(time) AS t')).map((r) => r.t)).toEqual(Array(4).fill(BigInt(T_MS)));
    const now = await rows('mp3', 'now', 'epoch_ms(time)::DOUBLE AS t');
    expect(now).toHaveLength(2);
    for (const r of now) expect(Math.abs((r.t as number) - before)).toBeLessThan(60_000);
  });

  test('gzip and zstd bodies are detected by magic bytes', async () => {
    const body = pack({ m: 'z', columns: { time: [T_MS, T_MS + 1], v: [1, 2] } });
    expect((await post('mp4', gzipSync(body))).status).toBe(204);
    expect((await post('mp4', gzipSync(body), { 'content-encoding': 'gzip' })).status).toBe(204);
    expect((await post('mp4', zstdCompressSync(body))).status).toBe(204);
    await flush();
    expect(await queryFiles(s.dir, 'SELECT count(*)::INT AS c FROM $files(mp4/**/*.parquet)')).toEqual([{ c: 6 }]);
  });

  test('a batch spanning three hours gives three files; historical points land in their own hour', async () => {
    const H = 3_600_000;
    const old = Date.UTC(2001, 0, 2, 3, 4, 5);
    expect((await post('mp5', pack({ m: 'span', columns: { time: [T_MS + 2 * H, T_MS, T_MS + H, old], v: [3, 1, 2, 0] } }))).status).toBe(204);
    await flush();
    const files = dataFiles(s.dir).filter((f) => f.startsWith('mp5/'));
    expect(files.map((f) => f.split('/').slice(2, 6).join('/'))).toEqual(['2001/01/02/03', '2023/11/14/22', '2023/11/14/23', '2023/11/15/00']);
  });

  test('schema evolution: new columns appear, earlier rows are NULL (never 0)', async () => {
    expect((await post('mp6', pack({ m: 'evo', columns: { time: [T_MS], a: [1.5] } }))).status).toBe(204);
    expect((await post('mp6', pack({ m: 'evo', columns: { time: [T_MS + 1], b: [7] } }))).status).toBe(204);
    await flush();
    expect((await post('mp6', pack({ m: 'evo', columns: { time: [T_MS + 2], c: ['x'], a: [2.5] } }))).status).toBe(204);
    await flush();
    expect(await rows('mp6', 'evo', 'a, b, c')).toEqual([
      { a: 1.5, b: null, c: null },
      { a: null, b: 7n, c: null },
      { a: 2.5, b: null, c: 'x' },
    ]);
  });

  test('a column changing type flushes the buffered rows first (one file per schema)', async () => {
    expect((await post('mp7', pack({ m: 'chg', columns: { time: [T_MS], v: [1.5] } }))).status).toBe(204);
    expect((await post('mp7', pack({ m: 'chg', columns: { time: [T_MS + 1], v: ['text'] } }))).status).toBe(204);
    await flush();
    expect(dataFiles(s.dir).filter((f) => f.startsWith('mp7/'))).toHaveLength(2);
  });

  test('invalid database, measurement or payload: 400 naming the problem, nothing written', async () => {
    const ok = pack({ m: 'cpu', columns: { time: [T_MS], v: [1] } });
    for (const db of ['1abc', 'system', 'a.b', 'x'.repeat(65)]) {
      const res = await post(db, ok);
      expect(res.status).toBe(400);
      expect((await jsonOf(res)).error).toMatch(/database name/);
    }
    for (const m of ['../etc', 'a/b', '.hidden', '']) {
      const res = await post('mp8', pack({ m, columns: { time: [T_MS], v: [1] } }));
      expect(res.status).toBe(400);
    }
    const unequal = await post('mp8', pack({ m: 'cpu', columns: { time: [T_MS, T_MS + 1], v: [1] } }));
    expect(unequal.status).toBe(400);
    expect((await jsonOf(unequal)).error).toContain('v');
    expect((await post('mp8', new Uint8Array([0xc1]))).status).toBe(400);
    await flush();
    expect(dataFiles(s.dir).filter((f) => f.startsWith('mp8/'))).toEqual([]);
  });

  test('default database, stats and spec', async () => {
    const res = await s.fetch('/api/v1/write/msgpack', { method: 'POST', headers: { 'content-type': 'application/msgpack' }, body: pack({ m: 'dflt', columns: { time: [T_MS], v: [1] } }) });
    expect(res.status).toBe(204);
    await flush();
    expect(dataFiles(s.dir).some((f) => f.startsWith('default/dflt/'))).toBe(true);
    const stats = await jsonOf(await s.fetch('/api/v1/write/msgpack/stats'));
    expect(stats.records).toBeGreaterThan(0);
    expect(stats.buffer.flushes).toBeGreaterThan(0);
    // Bodies parsed on the event loop carve their columns from the reused pool.
    expect(stats.column_memory.blocksCreated).toBeGreaterThan(0);
    expect(Object.keys(stats.column_memory).sort()).toEqual(['blocksCreated', 'freeBlocks', 'pins', 'reusedCarvings', 'waiting']);
    const spec = await jsonOf(await s.fetch('/api/v1/write/msgpack/spec'));
    expect(spec.formats.columnar).toBeDefined();
  });

  test('write needs credentials', async () => {
    const res = await s.fetch('/api/v1/write/msgpack', { method: 'POST', token: null, body: pack({ m: 'x', columns: { time: [T_MS], v: [1] } }) });
    expect(res.status).toBe(401);
  });
});

describe('column names differing only in case', () => {
  test('in one batch: 400; in later writes: the buffered rows are flushed first', async () => {
    const res = await post('mp9', pack({ m: 'case', columns: { time: [T_MS], Host: ['a'], host: ['b'] } }));
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).error).toContain('letter case');
    expect((await post('mp9', pack({ m: 'case', columns: { time: [T_MS], host: ['a'] } }))).status).toBe(204);
    expect((await post('mp9', pack({ m: 'case', columns: { time: [T_MS + 1], Host: ['b'] } }))).status).toBe(204);
    await flush();
    expect(dataFiles(s.dir).filter((f) => f.startsWith('mp9/'))).toHaveLength(2);
  });
});

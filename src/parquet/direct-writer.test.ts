import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { DuckDBInstance } from '../duckdb/index.ts';
import { type Column, type ColumnBatch, dictionaryColumn } from '../ingest/index.ts';
import { writeHourFiles, type ParquetCompression } from './index.ts';
import { fillKeptScratch } from './scratch.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-direct-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const T0 = Date.UTC(2024, 0, 1, 5) * 1000;
let n = 0;

/** The benchmark shape: sorted times in one hour, two coded tags, five floats. */
function metrics(rows: number, t0: number): ColumnBatch {
  const time = new Float64Array(rows);
  const host = new Uint32Array(rows);
  const region = new Uint32Array(rows);
  const fields = Array.from({ length: 5 }, () => new Float64Array(rows));
  for (let i = 0; i < rows; i++) {
    time[i] = t0 + Math.floor(i / 3);
    host[i] = 1 + (i % 100);
    region[i] = 1 + ((i * 7) % 10);
    fields.forEach((f, k) => (f[i] = k === 4 ? i % 5 : Math.random() * 100));
  }
  const columns = new Map<string, Column>([
    ['host', dictionaryColumn({ codes: host, dictionary: [null, ...Array.from({ length: 100 }, (_, i) => `host_${i}`)] }, true)],
    ['region', dictionaryColumn({ codes: region, dictionary: [null, ...Array.from({ length: 10 }, (_, i) => `région ${i} ✓`)] }, true)],
    ...fields.map((values, k) => [`f${k}`, { type: 'float64', values, valid: null, tag: false }] as [string, Column]),
  ]);
  return { measurement: 'm', length: rows, time, columns };
}

/** Every type with NULLs, NaN/Infinity, int64 extremes, an all-NULL column, a column missing from a batch and int64 widened to float64. */
function oddities(): ColumnBatch[] {
  const a: ColumnBatch = {
    measurement: 'm',
    length: 6,
    time: Float64Array.from([T0, T0 + 1, T0 + 1, T0 + 2, T0 + 3, T0 + 4]),
    columns: new Map<string, Column>([
      ['f', { type: 'float64', values: Float64Array.from([1.5, NaN, Infinity, -Infinity, -0, 2]), valid: Uint8Array.from([1, 1, 1, 1, 1, 0]), tag: false }],
      ['i', { type: 'int64', values: BigInt64Array.from([9223372036854775807n, -9223372036854775808n, 0n, 5n, -5n, 1n]), valid: Uint8Array.from([1, 1, 0, 1, 1, 1]), tag: false }],
      ['b', { type: 'bool', values: Uint8Array.from([1, 0, 0, 1, 1, 0]), valid: Uint8Array.from([1, 1, 1, 0, 1, 1]), tag: false }],
      ['w', { type: 'int64', values: BigInt64Array.from([1n, 2n, 3n, 4n, 5n, 6n]), valid: null, tag: false }],
      ['none', { type: 'float64', values: new Float64Array(6), valid: new Uint8Array(6), tag: false }],
      ['t', { type: 'string', values: ['x', null, 'y', "q'uote", 'x', null], valid: null, tag: true }],
    ]),
  };
  const b: ColumnBatch = {
    measurement: 'm',
    length: 3,
    time: Float64Array.from([T0 + 5, T0 + 6, T0 + 7]),
    columns: new Map<string, Column>([
      ['w', { type: 'float64', values: Float64Array.from([0.25, 0.5, 0.75]), valid: null, tag: false }],
      ['t', { type: 'string', values: ['z', 'z', 'x'], valid: null, tag: true }],
    ]),
  };
  return [a, b];
}

/** Three clients' sorted batches arriving interleaved, with equal times across them, plus one odd reversed batch. */
function interleaved(): ColumnBatch[] {
  const batch = (client: number, times: number[]): ColumnBatch => ({
    measurement: 'm',
    length: times.length,
    time: Float64Array.from(times, (t) => T0 + t),
    columns: new Map<string, Column>([
      ['client', { type: 'int64', values: BigInt64Array.from(times, () => BigInt(client)), valid: null, tag: false }],
      ['seq', { type: 'float64', values: Float64Array.from(times, (_, i) => i), valid: null, tag: false }],
    ]),
  });
  return [batch(1, [0, 2, 4, 6]), batch(2, [1, 2, 3, 9]), batch(3, [0, 0, 5]), batch(1, [7, 8]), batch(2, [10, 11]), batch(4, [3, 2, 1])];
}

/** Seeded fuzz: batches in and out of time order over up to three hours, every column type, NULLs, missing columns, ties. */
function fuzzed(seed: number): ColumnBatch[] {
  let state = seed;
  const rnd = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  const kinds = ['f1', 'f2', 'i1', 'b1', 's1', 's2'].filter(() => rnd() < 0.8);
  const base = T0 + Math.floor(rnd() * 3) * 1_800_000_000;
  return Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => {
    const rows = 1 + Math.floor(rnd() * (rnd() < 0.3 ? 60_000 : 3000));
    const time = new Float64Array(rows);
    let t = base + Math.floor(rnd() * 4) * 1000;
    for (let i = 0; i < rows; i++) time[i] = t += Math.floor(rnd() * 3) * (rnd() < 0.001 ? 1e9 : 1);
    const columns = new Map<string, Column>();
    for (const k of kinds) {
      if (rnd() < 0.15) continue;
      const valid = rnd() < 0.3 ? Uint8Array.from({ length: rows }, () => (rnd() < 0.8 ? 1 : 0)) : null;
      const n = 1 + Math.floor(rnd() * 50);
      if (k[0] === 'f') columns.set(k, { type: 'float64', values: Float64Array.from({ length: rows }, () => (rnd() < 0.5 ? Math.floor(rnd() * 5) : rnd() * 100)), valid, tag: false });
      else if (k[0] === 'i') columns.set(k, { type: 'int64', values: BigInt64Array.from({ length: rows }, () => BigInt(Math.floor((rnd() - 0.5) * 1e12))), valid, tag: false });
      else if (k[0] === 'b') columns.set(k, { type: 'bool', values: Uint8Array.from({ length: rows }, () => (rnd() < 0.5 ? 1 : 0)), valid, tag: false });
      else columns.set(k, dictionaryColumn({ codes: Uint32Array.from({ length: rows }, () => Math.floor(rnd() * (n + 1))), dictionary: [null, ...Array.from({ length: n }, (_, j) => `${k}_${j}`)] }, true));
    }
    return { measurement: 'm', length: rows, time, columns };
  });
}

async function write(batches: ColumnBatch[], compression: ParquetCompression, engine: 'auto' | 'duckdb' = 'auto'): Promise<string> {
  const path = join(dir, `f${n++}.parquet`);
  const files = await writeHourFiles(conn, batches, { compression, table: 't', pathFor: () => path, engine });
  expect(files).toHaveLength(1);
  return path;
}

const conn = await (await DuckDBInstance.create(':memory:')).connect();
const read = async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson();

describe('direct Parquet writer', () => {
  for (const [name, make] of [
    ['metrics over three row groups', () => [metrics(150_000, T0), metrics(150_000, T0 + 50_000)]],
    ['every type, NULLs, NaN, extremes, missing and widened columns', oddities],
    ['interleaved batches with equal times (merged, ties keep arrival order)', interleaved],
  ] as const) {
    test(`${name}: DuckDB reads the same rows, types and metadata as from its own file`, async () => {
      const batches = make();
      const direct = await write(batches, 'snappy');
      // The direct writer names itself in the footer: proof that this side did not go through DuckDB.
      expect(await read(`SELECT created_by FROM parquet_file_metadata('${direct}')`)).toEqual([{ created_by: 'svc' }]);
      const viaDuckDB = await write(batches, 'snappy', 'duckdb');
      const [a, b] = [`'${direct}'`, `'${viaDuckDB}'`];
      expect(await read(`DESCRIBE SELECT * FROM ${a}`)).toEqual(await read(`DESCRIBE SELECT * FROM ${b}`));
      const rows = (f: string) => read(`SELECT * FROM ${f}`);
      expect(await rows(a)).toEqual(await rows(b));
      expect(await read(`SELECT key, value FROM parquet_kv_metadata(${a})`)).toEqual(await read(`SELECT key, value FROM parquet_kv_metadata(${b})`));
      const groups = (f: string) => read(`SELECT count(DISTINCT row_group_id) AS g, max(row_group_num_rows) AS r FROM parquet_metadata(${f})`);
      expect(await groups(a)).toEqual(await groups(b));
      // Statistics are used for pruning: filtered results must match too.
      const names = new Set((await read(`DESCRIBE SELECT * FROM ${b}`)).map((c) => String(c.column_name)));
      const filters = ["time > '2024-01-01 05:00:00.02'", 'f0 > 50', "host = 'host_7'", 'f IS NULL', 'i < 0', 'b', "t = 'x'", 'w > 0.4', 'client = 2', 'seq > 1'].filter((w) => names.has(w.split(' ')[0]!));
      expect(filters.length).toBeGreaterThan(2);
      for (const where of filters) expect(await read(`SELECT * FROM ${a} WHERE ${where}`)).toEqual(await read(`SELECT * FROM ${b} WHERE ${where}`));
    });
  }

  test('rows over three hours, interleaved: one file per hour, the same as DuckDB writes', async () => {
    const HOUR = 3_600_000_000;
    const batches = [metrics(5000, T0 + HOUR - 2000), metrics(5000, T0 + 2 * HOUR - 100), metrics(3000, T0 + HOUR - 1000)];
    const write2 = async (engine: 'auto' | 'duckdb') => {
      const files = await writeHourFiles(conn, batches, { compression: 'snappy', table: 't', engine, pathFor: (h) => join(dir, `${engine}-${h}-${n++}.parquet`) });
      return files.map((f) => ({ hour: f.hour, rows: f.rows, min: f.minTime, max: f.maxTime, path: f.path }));
    };
    const [direct, viaDuckDB] = [await write2('auto'), await write2('duckdb')];
    expect(direct.map(({ path, ...rest }) => rest)).toEqual(viaDuckDB.map(({ path, ...rest }) => rest));
    expect(direct).toHaveLength(3);
    for (let k = 0; k < 3; k++) expect(await read(`SELECT * FROM '${direct[k]!.path}'`)).toEqual(await read(`SELECT * FROM '${viaDuckDB[k]!.path}'`));
  });

  test('sorted batches of many sizes over three hours: float pages straight from the batches match DuckDB, statistics too', async () => {
    const HOUR = 3_600_000_000;
    // In time order, each hour's file starting and ending inside a batch; f4 takes the copy path (NULLs in one batch).
    const sizes = [7, 40_000, 1, 90_000, 333, 60_000];
    let t = T0 + HOUR - 50_000;
    const batches = sizes.map((rows) => {
      const b = metrics(rows, t);
      t += Math.ceil(rows / 3) + 1;
      return b;
    });
    const hole = batches[3]!.columns.get('f4') as Column & { type: 'float64' };
    batches[3]!.columns.set('f4', { ...hole, valid: Uint8Array.from({ length: batches[3]!.length }, (_, i) => (i % 11 === 0 ? 0 : 1)) });
    const write3 = async (engine: 'auto' | 'duckdb') =>
      writeHourFiles(conn, batches, { compression: 'snappy', table: 't', engine, pathFor: (h) => join(dir, `sorted-${engine}-${h}-${n++}.parquet`) });
    const [direct, viaDuckDB] = [await write3('auto'), await write3('duckdb')];
    expect(direct.map((f) => f.rows)).toEqual(viaDuckDB.map((f) => f.rows));
    expect(direct.length).toBeGreaterThan(1);
    const stats = (f: string) => read(`SELECT path_in_schema AS c, stats_min_value AS lo, stats_max_value AS hi, stats_null_count AS nulls FROM parquet_metadata('${f}') WHERE path_in_schema LIKE 'f%' ORDER BY row_group_id, c`);
    for (let k = 0; k < direct.length; k++) {
      expect(await read(`SELECT * FROM '${direct[k]!.path}'`)).toEqual(await read(`SELECT * FROM '${viaDuckDB[k]!.path}'`));
      expect(await stats(direct[k]!.path)).toEqual(await stats(viaDuckDB[k]!.path));
    }
  });

  test('an independent reader (hyparquet) reads the file', async () => {
    const path = await write(oddities(), 'snappy');
    const file = await Bun.file(path).arrayBuffer();
    const meta = await parquetMetadataAsync(file);
    expect(Number(meta.num_rows)).toBe(9);
    const rows = await parquetReadObjects({ file, metadata: meta });
    expect(rows.map((r) => [r.t, r.i, r.b])).toEqual([
      ['x', 9223372036854775807n, true],
      [null, -9223372036854775808n, false],
      ['y', null, false],
      ["q'uote", 5n, null],
      ['x', -5n, true],
      [null, 1n, false],
      ['z', null, null],
      ['z', null, null],
      ['x', null, null],
    ]);
  });

  test('measurements that do not compress are stored uncompressed; compressible columns keep snappy', async () => {
    const path = await write([metrics(20_000, T0)], 'snappy');
    const codecs = Object.fromEntries((await read(`SELECT path_in_schema AS c, compression FROM parquet_metadata('${path}')`)).map((r) => [r.c, r.compression]));
    expect(codecs.f0).toBe('UNCOMPRESSED');
    expect(codecs.f4).toBe('SNAPPY');
    const none = await write([metrics(1000, T0)], 'none');
    expect(new Set((await read(`SELECT compression FROM parquet_metadata('${none}')`)).map((r) => r.compression))).toEqual(new Set(['UNCOMPRESSED']));
  });

  test('memory reused between flushes never reaches a file: fuzzed writes are byte-identical over scratch filled with 0x00 and 0xA5', async () => {
    // A large write first, so the smaller ones after it run over memory that holds its bytes.
    await write([metrics(150_000, T0)], 'snappy');
    for (let seed = 1; seed <= 12; seed++) {
      const batches = fuzzed(seed);
      const bytes = async (compression: ParquetCompression, fill: number) => {
        expect(fillKeptScratch(fill)).toBeGreaterThan(0);
        const files = await writeHourFiles(conn, batches, { compression, table: 't', pathFor: (h) => join(dir, `fuzz-${seed}-${fill}-${h}-${n++}.parquet`) });
        return Promise.all(files.map(async (f) => new Uint8Array(await Bun.file(f.path).arrayBuffer())));
      };
      for (const compression of ['snappy', 'none'] as const) {
        const [zeroed, poisoned] = [await bytes(compression, 0), await bytes(compression, 0xa5)];
        expect(poisoned.length).toBe(zeroed.length);
        poisoned.forEach((f, k) => expect(Buffer.compare(f, zeroed[k]!)).toBe(0));
      }
    }
    // And what those files hold is what DuckDB's own writer makes of the same rows.
    const batches = fuzzed(3);
    const viaDuckDB = await writeHourFiles(conn, batches, { compression: 'snappy', table: 't', engine: 'duckdb', pathFor: (h) => join(dir, `fuzz-duck-${h}-${n++}.parquet`) });
    const direct = await writeHourFiles(conn, batches, { compression: 'snappy', table: 't', pathFor: (h) => join(dir, `fuzz-direct-${h}-${n++}.parquet`) });
    expect(direct.map((f) => f.rows)).toEqual(viaDuckDB.map((f) => f.rows));
    for (let k = 0; k < direct.length; k++) expect(await read(`SELECT * FROM '${direct[k]!.path}'`)).toEqual(await read(`SELECT * FROM '${viaDuckDB[k]!.path}'`));
  });
});

import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '../duckdb/index.ts';
import type { Column, ColumnBatch } from '../ingest/index.ts';
import { loadBatchesIntoTable, readParquetSummary, writeHourFiles } from './index.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-parquet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const H = 3_600_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;

const f64 = (v: number[], valid: number[] | null = null): Column => ({ type: 'float64', values: Float64Array.from(v), valid: valid && Uint8Array.from(valid), tag: false });
const i64 = (v: number[]): Column => ({ type: 'int64', values: BigInt64Array.from(v.map(BigInt)), valid: null, tag: false });
const str = (v: (string | null)[], tag = true): Column => ({ type: 'string', values: v, valid: null, tag });
const batch = (time: number[], cols: Record<string, Column>): ColumnBatch => ({ measurement: 'cpu', length: time.length, time: Float64Array.from(time), columns: new Map(Object.entries(cols)) });

async function rows(conn: Awaited<ReturnType<DuckDBInstance['connect']>>, sql: string) {
  return (await conn.runAndReadAll(sql)).getRowObjectsJS();
}

describe('parquet writer', async () => {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();

  test('splits by UTC hour, sorts stably by time, keeps NULLs, widens int to float, records tags', async () => {
    const b1 = batch([T0 + H + 5, T0 + 2, T0 + 1, T0 + 2], { host: str(['a', 'b', 'c', 'd']), v: f64([1, 2, 3, 4], [1, 0, 1, 1]), n: i64([10, 20, 30, 40]) });
    const b2 = batch([T0 + 3, T0 + 2 * H], { host: str(['e', null]), v: i64([7, 8]), extra: { type: 'bool', values: Uint8Array.from([1, 0]), valid: null, tag: false } });
    const paths: string[] = [];
    const files = await writeHourFiles(conn, [b1, b2], { compression: 'zstd', table: 't1', pathFor: (h) => (paths.push(join(dir, `${h}.parquet`)), paths.at(-1)!) });
    expect(files.map((f) => [f.hour, f.rows])).toEqual([[T0, 4], [T0 + H, 1], [T0 + 2 * H, 1]]);
    const first = await rows(conn, `SELECT epoch_us(time) AS t, host, v, n, extra FROM read_parquet('${files[0]!.path}')`);
    expect(first.map((r) => r.t)).toEqual([T0 + 1, T0 + 2, T0 + 2, T0 + 3].map(BigInt));
    // Equal times keep arrival order: 'b' arrived before 'd'.
    expect(first.map((r) => r.host)).toEqual(['c', 'b', 'd', 'e']);
    expect(first.map((r) => r.v)).toEqual([3, null, 4, 7]);
    expect(first.map((r) => r.n)).toEqual([30n, 20n, 40n, null]);
    expect(first.map((r) => r.extra)).toEqual([null, null, null, true]);
    const types = await rows(conn, `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${files[0]!.path}'))`);
    expect(Object.fromEntries(types.map((r) => [r.column_name, r.column_type]))).toEqual({ time: 'TIMESTAMP', host: 'VARCHAR', v: 'DOUBLE', n: 'BIGINT', extra: 'BOOLEAN' });
    const summary = await readParquetSummary(conn, files[2]!.path);
    expect(summary).toEqual({ rows: 1, minTime: T0 + 2 * H, maxTime: T0 + 2 * H, columns: ['time', 'host', 'v', 'n', 'extra'], tags: ['host'] });
    const last = await rows(conn, `SELECT host, v FROM read_parquet('${files[2]!.path}')`);
    expect(last).toEqual([{ host: null, v: 8 }]);
  });

  test('loads many small batches across chunk boundaries, and high-cardinality strings', async () => {
    const batches: ColumnBatch[] = [];
    let t = T0;
    for (let i = 0; i < 3000; i++) batches.push(batch([t++, t++], { id: str([`u${t}`, `w${t}`], false), x: f64([i, i]) }));
    // NULLs only in the first chunk: later chunks (the chunk is reused) must not inherit its NULL mask.
    batches[0] = batch([T0 - 2, T0 - 1], { id: str([null, 'n'], false), x: f64([0, 0], [0, 1]) });
    const loaded = await loadBatchesIntoTable(conn, 'many', batches);
    expect(loaded.rows).toBe(6000);
    expect(await rows(conn, 'SELECT count(x)::INT AS x, count(id)::INT AS id FROM many')).toEqual([{ x: 5999, id: 5999 }]);
    const r = await rows(conn, `SELECT count(*)::INT AS c, count(DISTINCT id)::INT AS d, sum(x)::DOUBLE AS s, min(epoch_us(time))::DOUBLE AS lo FROM many`);
    expect(r[0]).toEqual({ c: 6000, d: 5999, s: 2 * (2999 * 3000) / 2, lo: T0 - 2 });
  });

  test('type mix other than int/float widens to string', async () => {
    const a = batch([T0], { v: f64([1.5]) });
    const b = batch([T0 + 1], { v: str(['x'], false) });
    const loaded = await loadBatchesIntoTable(conn, 'mixed', [a, b]);
    expect(loaded.columns.find((c) => c.name === 'v')?.type).toBe('string');
    expect(await rows(conn, 'SELECT v FROM mixed ORDER BY time')).toEqual([{ v: '1.5' }, { v: 'x' }]);
  });
});

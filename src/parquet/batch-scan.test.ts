import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '../duckdb/index.ts';
import { type Column, type ColumnBatch, dictionaryColumn } from '../ingest/index.ts';
import { writeHourFiles } from './index.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-scan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const T0 = Date.UTC(2024, 0, 1) * 1000;
const f64 = (v: number[], valid: number[] | null = null): Column => ({ type: 'float64', values: Float64Array.from(v), valid: valid && Uint8Array.from(valid), tag: false });
const coded = (dictionary: (string | null)[], codes: number[]): Column => dictionaryColumn({ codes: Uint32Array.from(codes), dictionary }, true);
const batch = (time: number[], cols: Record<string, Column>): ColumnBatch => ({ measurement: 'cpu', length: time.length, time: Float64Array.from(time), columns: new Map(Object.entries(cols)) });

describe('one-hour files streamed from the batch scan', async () => {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  let n = 0;
  const write = (batches: ColumnBatch[]) => writeHourFiles(conn, batches, { compression: 'snappy', table: 'scratch', pathFor: () => join(dir, `${n++}.parquet`) });
  const read = async (path: string, cols: string) => (await conn.runAndReadAll(`SELECT ${cols} FROM read_parquet('${path}')`)).getRowObjectsJS();

  test('dictionary-coded and plain string columns mix; codes are remapped, NULL is code 0', async () => {
    const a = batch([T0, T0 + 1, T0 + 2], { host: coded([null, 'x', 'y'], [2, 0, 1]), v: f64([1, 2, 3]) });
    const b = batch([T0 + 3, T0 + 4], { host: { type: 'string', values: ['y', null], valid: null, tag: true }, v: f64([4, 5]) });
    const c = batch([T0 + 5], { host: coded([null, 'z', 'y', 'y'], [3]), v: f64([6]) });
    const [file] = await write([a, b, c]);
    expect(file!.rows).toBe(6);
    expect((await read(file!.path, 'host, v')).map((r) => [r.host, r.v])).toEqual([['y', 1], [null, 2], ['x', 3], ['y', 4], [null, 5], ['y', 6]]);
    // The lazily built `values` agree with the codes, for consumers that read them.
    expect(a.columns.get('host')!.values).toEqual(['y', null, 'x']);
  });

  test('unsorted rows are sorted stably across many chunks; NULLs in the first chunk only do not leak', async () => {
    const rows = 5000;
    const time: number[] = [];
    const v: number[] = [];
    const valid: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < rows; i++) {
      time.push(T0 + (rows - i) * 10 + (i % 3)); // descending, with ties
      v.push(i);
      valid.push(i < 100 ? 0 : 1);
      ids.push(i < 100 ? (null as unknown as string) : `id-${i}`); // high cardinality: VARCHAR
    }
    time[1] = time[0]!; // an equal time: arrival order must be kept
    const [file] = await write([batch(time, { v: f64(v, valid), id: { type: 'string', values: ids, valid: null, tag: false }, n: { type: 'int64', values: BigInt64Array.from(v.map(BigInt)), valid: null, tag: false } })]);
    const out = await read(file!.path, 'epoch_us(time)::DOUBLE AS t, v, id, n');
    expect(out).toHaveLength(rows);
    const ts = out.map((r) => r.t as number);
    expect(ts).toEqual([...ts].sort((x, y) => x - y));
    const tie = out.filter((r) => r.t === time[0]);
    expect(tie.map((r) => r.n)).toEqual([0n, 1n]);
    expect(out.filter((r) => r.v === null)).toHaveLength(100);
    expect(out.filter((r) => r.id === null)).toHaveLength(100);
    expect(out.filter((r) => r.v !== null && r.id !== `id-${r.v}`)).toEqual([]);
  });

  test('sorted input keeps its order; int64 widens to float64; bool and missing columns become NULL', async () => {
    const a = batch([T0, T0 + 1], { v: { type: 'int64', values: BigInt64Array.from([7n, 8n]), valid: null, tag: false }, ok: { type: 'bool', values: Uint8Array.from([1, 0]), valid: null, tag: false } });
    const b = batch([T0 + 2], { v: f64([2.5]) });
    const [file] = await write([a, b]);
    expect(await read(file!.path, 'v, ok')).toEqual([{ v: 7, ok: true }, { v: 8, ok: false }, { v: 2.5, ok: null }]);
  });
});

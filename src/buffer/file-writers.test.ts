import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '../duckdb/index.ts';
import { type Column, type ColumnBatch, dictionaryColumn, fromWire, toWire } from '../ingest/index.ts';
import { Logger } from '../observability/index.ts';
import { openFileWriters } from './file-writers.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-writers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const HOUR = 3_600_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;
const logger = new Logger({ level: 'error', format: 'text', bufferSize: 10 });

/** Two batches over two hours, out of time order, with every column type, NULLs and coded strings. */
function batches(): ColumnBatch[] {
  const shared = new Float64Array(new SharedArrayBuffer(4 * 8));
  shared.set([T0 + HOUR + 5, T0 + 3, T0 + HOUR + 1, T0 + 1]);
  const a: ColumnBatch = {
    measurement: 'm',
    length: 4,
    time: shared,
    columns: new Map<string, Column>([
      ['host', dictionaryColumn({ codes: Uint32Array.from([1, 2, 0, 1]), dictionary: [null, 'a', "b'q"] }, true)],
      ['f', { type: 'float64', values: Float64Array.from([1.5, NaN, 3, 4]), valid: Uint8Array.from([1, 1, 0, 1]), tag: false }],
      ['i', { type: 'int64', values: BigInt64Array.from([1n, -2n, 9007199254740993n, 4n]), valid: null, tag: false }],
      ['b', { type: 'bool', values: Uint8Array.from([1, 0, 1, 0]), valid: null, tag: false }],
    ]),
  };
  const b: ColumnBatch = {
    measurement: 'm',
    length: 2,
    time: Float64Array.from([T0 + 2, T0 + HOUR + 2]),
    columns: new Map<string, Column>([['s', { type: 'string', values: ['x', null], valid: null, tag: false }]]),
  };
  return [a, b];
}

async function rows(conn: Awaited<ReturnType<DuckDBInstance['connect']>>, paths: string[]) {
  const list = paths.map((p) => `'${p}'`).join(', ');
  const r = await conn.runAndReadAll(`SELECT epoch_us(time) AS t, host, f, i, b, s FROM read_parquet([${list}], union_by_name = true) ORDER BY t`);
  return r.getRowObjectsJson();
}

describe('flush writers', async () => {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();

  test('a Worker (as started by default, and lowered and settling its files) and the in-thread fallback write the same files: one per hour, sorted by time', async () => {
    const results = [];
    const modes = [
      ['w', { niceSteps: 0, settleFiles: false }],
      ['s', { niceSteps: 10, settleFiles: true }],
      ['c', null],
    ] as const;
    for (const [name, workers] of modes) {
      const [writer] = await openFileWriters(1, instance, logger, workers);
      const files = await writer!.write(batches(), 'snappy', join(dir, name));
      await writer!.close();
      expect(files.map((f) => [f.hour, f.rows, f.minTime, f.maxTime])).toEqual([
        [T0, 3, T0 + 1, T0 + 3],
        [T0 + HOUR, 3, T0 + HOUR + 1, T0 + HOUR + 5],
      ]);
      results.push(await rows(conn, files.map((f) => f.path)));
    }
    expect(results[0]).toEqual(results[1]!);
    expect(results[0]).toEqual(results[2]!);
    expect(results[0]!.map((r) => [r.t, r.host, r.f, r.i, r.b, r.s])).toEqual([
      [String(T0 + 1), 'a', 4, '4', false, null],
      [String(T0 + 2), null, null, null, null, 'x'],
      [String(T0 + 3), "b'q", 'NaN', '-2', false, null],
      [String(T0 + HOUR + 1), null, null, '9007199254740993', true, null],
      [String(T0 + HOUR + 2), null, null, null, null, null],
      [String(T0 + HOUR + 5), 'a', 1.5, '1', true, null],
    ]);
  });

  test('a failed write rejects with the engine error and the worker keeps serving', async () => {
    const [writer] = await openFileWriters(1, instance, logger, { niceSteps: 0, settleFiles: true });
    // (`expect(promise).rejects` never settled here under bun test 1.4.5; a plain then() does.)
    // A file where the folder should be: no writer can create the path.
    writeFileSync(join(dir, 'not-a-folder'), '');
    const err = await writer!.write(batches(), 'snappy', join(dir, 'not-a-folder', 'x')).then(() => null, (e: Error) => e);
    expect(err?.message).toMatch(/not-a-folder|ENOTDIR/);
    const files = await writer!.write(batches(), 'zstd', join(dir, 'again'));
    expect(files).toHaveLength(2);
    await writer!.close();
  });
});

describe('batch wire form', () => {
  test('shared arrays travel as they are; others are copied once and transferred; every column reads back', () => {
    const [a, b] = batches();
    // Different column sets: the two stay two batches on the wire.
    const { batches: wire, transfer } = toWire([a!, b!]);
    expect(wire.buffers).toContain(a!.time.buffer);
    expect(transfer).not.toContain(a!.time.buffer as ArrayBuffer);
    expect(transfer.length).toBeGreaterThan(0);
    for (const t of transfer) expect(wire.buffers).toContain(t);
    const back = fromWire(wire);
    const plain = (bs: ColumnBatch[]) =>
      bs.flatMap((x) => Array.from({ length: x.length }, (_, r) => Object.fromEntries([['time', x.time[r]], ...[...x.columns].map(([k, c]) => [k, c.valid && c.valid[r] === 0 ? null : c.values[r]])])));
    expect(plain(back)).toEqual(plain([a!, b!]));
    expect(back[0]!.time.buffer).toBe(a!.time.buffer);
    expect(back.map((x) => [...x.columns].map(([k, c]) => [k, c.type, c.tag]))).toEqual([a!, b!].map((x) => [...x.columns].map(([k, c]) => [k, c.type, c.tag])));
  });
});

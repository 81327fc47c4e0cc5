import { describe, expect, test } from 'bun:test';
import { type Column, type ColumnBatch, dictionaryColumn } from './column-batch.ts';
import { coalesceSmallBatches } from './coalesce-batches.ts';
import { fromWire, toWire } from './batch-wire.ts';

/** A batch of `m` with every column kind; `k` varies the values so joins are visible. */
function batch(k: number, measurement = 'm'): ColumnBatch {
  return {
    measurement,
    length: 3,
    time: Float64Array.from([k * 10 + 1, k * 10 + 2, k * 10 + 3]),
    columns: new Map<string, Column>([
      ['host', dictionaryColumn({ codes: Uint32Array.from([1, 0, 2]), dictionary: [null, `h${k}`, 'shared'] }, true)],
      ['note', { type: 'string', values: [`n${k}`, null, 'x'], valid: null, tag: false }],
      ['f', { type: 'float64', values: Float64Array.from([k, k + 0.5, k + 1]), valid: k === 1 ? Uint8Array.from([1, 0, 1]) : null, tag: false }],
      ['i', { type: 'int64', values: BigInt64Array.from([BigInt(k), -1n, 9007199254740993n]), valid: null, tag: false }],
      ['b', { type: 'bool', values: Uint8Array.from([1, 0, k & 1]), valid: null, tag: false }],
    ]),
  };
}

/** Rows of batches as plain objects (NULL as null), in order. */
function rowsOf(batches: readonly ColumnBatch[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const b of batches)
    for (let r = 0; r < b.length; r++) {
      const row: Record<string, unknown> = { measurement: b.measurement, time: b.time[r] };
      for (const [name, col] of b.columns) row[name] = col.valid && col.valid[r] === 0 ? null : col.values[r];
      out.push(row);
    }
  return out;
}

describe('coalesceSmallBatches', () => {
  test('consecutive same-shape batches become one with the same rows in the same order, every column kind', () => {
    const input = [batch(0), batch(1), batch(2)];
    const out = coalesceSmallBatches(input);
    expect(out.length).toBe(1);
    expect(out[0]!.length).toBe(9);
    expect(rowsOf(out)).toEqual(rowsOf(input));
    expect((out[0]!.columns.get('host') as Column & { type: 'string' }).dict!.dictionary).toEqual([null, 'h0', 'shared', 'h1', 'h2']);
    expect(out[0]!.columns.get('host')!.tag).toBe(true);
    // And through the wire, as the flush worker receives them.
    const back = fromWire(toWire(input).batches);
    expect(back.length).toBe(1);
    expect(rowsOf(back)).toEqual(rowsOf(input));
  });

  test('a different measurement, column set or type, and large batches break a run; nothing is reordered', () => {
    const other = batch(3, 'n');
    const extra = batch(4);
    extra.columns.set('g', { type: 'float64', values: Float64Array.from([1, 2, 3]), valid: null, tag: false });
    const retyped = batch(5);
    retyped.columns.set('f', { type: 'int64', values: BigInt64Array.from([1n, 2n, 3n]), valid: null, tag: false });
    const big: ColumnBatch = { measurement: 'm', length: 5000, time: new Float64Array(5000), columns: new Map() };
    const input = [batch(0), batch(1), other, extra, retyped, batch(6), big, batch(7)];
    const out = coalesceSmallBatches(input);
    expect(out.map((b) => b.length)).toEqual([6, 3, 3, 3, 3, 5000, 3]);
    expect(out[5]).toBe(big);
    expect(rowsOf(out)).toEqual(rowsOf(input));
  });

  test('a single batch or none is returned as is', () => {
    const one = [batch(0)];
    expect(coalesceSmallBatches(one)).toBe(one);
    expect(coalesceSmallBatches([])).toEqual([]);
  });
});

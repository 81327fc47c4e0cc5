import { describe, expect, test } from 'bun:test';
import { BatchBuilder, ColumnBuilder, KIND_FLOAT, KIND_INT, KIND_STRING } from './column-builder.ts';

describe('ColumnBuilder', () => {
  test('skipped rows become NULL lazily and the column pads to the batch length', () => {
    const col = new ColumnBuilder('v', KIND_FLOAT, false, 0, 2);
    col.setFloat(0, 1);
    col.setFloat(3, 4);
    col.setFloat(40, 41); // past the initial capacity
    const out = col.toColumn(42);
    expect(out.type).toBe('float64');
    expect(out.values.length).toBe(42);
    expect(out.valid?.length).toBe(42);
    expect([out.valid?.[0], out.valid?.[1], out.valid?.[3], out.valid?.[39], out.valid?.[40], out.valid?.[41]]).toEqual([1, 0, 1, 0, 1, 0]);
    expect([out.values[0], out.values[3], out.values[40]]).toEqual([1, 4, 41]);
  });

  test('a dense column has no validity array', () => {
    const col = new ColumnBuilder('v', KIND_INT, false, 0, 4);
    for (let i = 0; i < 100; i++) col.setInt(i, i - 50);
    const out = col.toColumn(100);
    expect(out.valid).toBeNull();
    expect(out.values[0]).toBe(-50n);
    expect(out.values[99]).toBe(49n);
  });

  test('setInt writes exact two-complement halves', () => {
    const col = new ColumnBuilder('v', KIND_INT, false, 0, 4);
    const nums = [0, -1, 1, -4294967296, 4294967295, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, -123456789012];
    nums.forEach((n, i) => col.setInt(i, n));
    expect(Array.from(col.toColumn(nums.length).values as BigInt64Array)).toEqual(nums.map((n) => BigInt(n)));
  });

  test('truncate forgets values at and after a row; promoteToFloat keeps values and NULLs', () => {
    const col = new ColumnBuilder('v', KIND_INT, false, 0, 4);
    col.setInt(0, 7);
    col.setInt(2, 9);
    col.truncate(2);
    col.promoteToFloat();
    col.setFloat(3, 2.5);
    const out = col.toColumn(4);
    expect(out.type).toBe('float64');
    expect(Array.from(out.values as Float64Array).filter((_, i) => out.valid?.[i] === 1)).toEqual([7, 2.5]);
    expect(Array.from(out.valid ?? [])).toEqual([1, 0, 0, 1]);
  });

  test('string columns hold nulls in the array and keep the tag flag', () => {
    const col = new ColumnBuilder('host', KIND_STRING, true, 0, 4);
    col.setString(1, 'a');
    col.setString(2, 'b');
    col.truncate(2);
    expect(col.toColumn(3)).toEqual({ type: 'string', values: [null, 'a', null], valid: null, tag: true });
  });
});

describe('BatchBuilder', () => {
  test('rollbackRow removes the columns the row introduced and the values it wrote', () => {
    const b = new BatchBuilder('m', 2);
    b.addColumn('a', KIND_FLOAT, false).setFloat(0, 1);
    b.commitRow(10);
    b.columns.get('a')?.setFloat(1, 2);
    b.addColumn('new', KIND_FLOAT, false).setFloat(1, 3);
    b.rollbackRow();
    b.commitRow(20);
    b.commitRow(30);
    const out = b.finish();
    expect([...out.columns.keys()]).toEqual(['a']);
    expect(Array.from(out.time)).toEqual([10, 20, 30]);
    expect(Array.from(out.columns.get('a')?.valid ?? [])).toEqual([1, 0, 0]);
  });
});

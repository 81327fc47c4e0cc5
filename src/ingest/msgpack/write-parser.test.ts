import { describe, expect, test } from 'bun:test';
import { Packr } from 'msgpackr';
import type { ColumnBatch } from '../column-batch.ts';
import { parseMsgpackWrite } from './index.ts';
import { values, errorOf } from '../test-support.ts';

const NOW = 1_700_000_000_123_456;
const packr = new Packr({ useRecords: false });
const pack = (v: unknown) => packr.pack(v);
const parse = (v: unknown) => parseMsgpackWrite(pack(v), { now: NOW });

function one(v: unknown): ColumnBatch {
  const batches = parse(v);
  expect(batches.length).toBe(1);
  return batches[0];
}



/** Hand-made MessagePack for what msgpackr cannot write: whole numbers in float64 encoding, as Python and Go clients send them. */
const raw = {
  map: (entries: Uint8Array[][]) => cat([new Uint8Array([0x80 | entries.length]), ...entries.flat()]),
  arr: (items: Uint8Array[]) => cat([new Uint8Array([0x90 | items.length]), ...items]),
  str: (s: string) => cat([new Uint8Array([0xa0 | s.length]), new TextEncoder().encode(s)]),
  f64: (v: number) => {
    const b = new Uint8Array(9);
    b[0] = 0xcb;
    new DataView(b.buffer).setFloat64(1, v);
    return b;
  },
  int: (v: number) => new Uint8Array([v]),
};
function cat(parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

describe('parseMsgpackWrite: columnar form', () => {
  test('typed columns; string columns are tags', () => {
    const b = one({
      m: 'cpu',
      columns: { time: [1700000000000, 1700000000001], host: ['a', 'b'], usage: [1.5, 2.25], n: [1, -2], ok: [true, false] },
    });
    expect(b.measurement).toBe('cpu');
    expect(b.length).toBe(2);
    expect(Array.from(b.time)).toEqual([1_700_000_000_000_000, 1_700_000_000_001_000]);
    expect(b.columns.get('host')).toEqual({ type: 'string', values: ['a', 'b'], valid: null, tag: true });
    expect(b.columns.get('usage')?.type).toBe('float64');
    expect(values(b, 'usage')).toEqual([1.5, 2.25]);
    expect(b.columns.get('n')?.type).toBe('int64');
    expect(values(b, 'n')).toEqual([1n, -2n]);
    expect(b.columns.get('ok')?.type).toBe('bool');
    expect(values(b, 'ok')).toEqual([true, false]);
  });

  test('int vs float follows the wire encoding: all-int -> int64, any float -> float64', () => {
    const b = one({ m: 'm', columns: { ints: [1, 2, 3], mixed: [1, 2.5, 3] } });
    expect(b.columns.get('ints')?.type).toBe('int64');
    expect(b.columns.get('mixed')?.type).toBe('float64');
    expect(values(b, 'mixed')).toEqual([1, 2.5, 3]);
  });

  test('whole numbers sent in float64 encoding stay float64 (what Number.isInteger would get wrong)', () => {
    const body = raw.map([
      [raw.str('m'), raw.str('m')],
      [raw.str('columns'), raw.map([[raw.str('v'), raw.arr([raw.f64(12), raw.f64(13)])], [raw.str('w'), raw.arr([raw.int(1), raw.f64(2)])]])],
    ]);
    const b = parseMsgpackWrite(body, { now: NOW })[0];
    expect(b.columns.get('v')?.type).toBe('float64');
    expect(values(b, 'v')).toEqual([12, 13]);
    expect(b.columns.get('w')?.type).toBe('float64');
    expect(values(b, 'w')).toEqual([1, 2]);
  });

  test('int64 beyond 2^53 is exact; uint64 above the int64 maximum is refused', () => {
    const b = one({ m: 'm', columns: { big: [9007199254740993n, -9223372036854775808n, 9223372036854775807n] } });
    expect(values(b, 'big')).toEqual([9007199254740993n, -9223372036854775808n, 9223372036854775807n]);
    const err = errorOf(() => parse({ m: 'm', columns: { big: [1, 2n ** 64n - 1n] } }));
    expect(err.message).toBe("cannot decode column 'big': row 1 is 18446744073709551615, above the int64 maximum");
  });

  test('nulls become NULL (valid bitmap), never 0; an all-null column is left out', () => {
    const b = one({ m: 'm', columns: { a: [null, 1.5, null], n: [1, null, 3], s: [null, 'x', null], none: [null, null, null] } });
    expect(values(b, 'a')).toEqual([null, 1.5, null]);
    expect(b.columns.get('a')?.valid).toEqual(new Uint8Array([0, 1, 0]));
    expect(values(b, 'n')).toEqual([1n, null, 3n]);
    expect(values(b, 's')).toEqual([null, 'x', null]);
    expect(b.columns.has('none')).toBe(false);
  });

  test('time unit is inferred per column from the first value', () => {
    const t = (time: unknown[]) => Array.from(one({ m: 'm', columns: { time, v: time.map(() => 1) } }).time);
    expect(t([1700000000, 1700000001])).toEqual([1_700_000_000_000_000, 1_700_000_001_000_000]);
    expect(t([1700000000123, 5])).toEqual([1_700_000_000_123_000, 5000]);
    expect(t([1700000000123456])).toEqual([1_700_000_000_123_456]);
    expect(t([1700000000123456789n, 1700000000123456789])).toEqual([1_700_000_000_123_456, 1_700_000_000_123_456]);
    expect(t([1700000000.5])).toEqual([1_700_000_000_500_000]);
    expect(t([0, 1])).toEqual([0, 1_000_000]);
  });

  test('nanosecond times are floored exactly, negatives included', () => {
    const b = one({ m: 'm', columns: { time: [9007199254740991999n, -1n, -1000n, -1001n, 10_000_000_000_000_999n], v: [1, 2, 3, 4, 5] } });
    expect(Array.from(b.time)).toEqual([9007199254740991, -1, -1, -2, 10_000_000_000_000]);
  });

  test('timestamp extension values (msgpackr Dates) are read as instants', () => {
    const b = one({ m: 'm', columns: { time: [new Date(1700000000123), new Date(1700000000000)], v: [1, 2] } });
    expect(Array.from(b.time)).toEqual([1_700_000_000_123_000, 1_700_000_000_000_000]);
  });

  test('missing time column means now for every row', () => {
    expect(Array.from(one({ m: 'm', columns: { v: [1, 2] } }).time)).toEqual([NOW, NOW]);
  });

  test('unequal column lengths name the column and both lengths', () => {
    const err = errorOf(() => parse({ m: 'm', columns: { time: [1, 2, 3], a: [1, 2, 3], b: [1, 2] } }));
    expect(err.kind).toBe('invalid');
    expect(err.message).toBe("cannot decode column 'b': it has 2 values but column 'time' has 3; columns must be equal length");
  });

  test('mixed types in one column name the column', () => {
    expect(errorOf(() => parse({ m: 'm', columns: { a: [1, 'x'] } })).message).toBe(
      "cannot decode column 'a': mixed types, row 1 is a string but earlier rows are integers",
    );
    expect(errorOf(() => parse({ m: 'm', columns: { a: [true, 1.5] } })).message).toContain("column 'a': mixed types");
    expect(errorOf(() => parse({ m: 'm', columns: { a: [{ x: 1 }] } })).message).toBe("cannot decode column 'a': row 0 is a map, not a scalar value");
  });

  test('bad time values', () => {
    expect(errorOf(() => parse({ m: 'm', columns: { time: [1, null], v: [1, 2] } })).message).toBe(
      "cannot decode column 'time': row 1 is null, expected an integer epoch time",
    );
    expect(errorOf(() => parse({ m: 'm', columns: { time: ['2024-01-01'], v: [1] } })).message).toContain('row 0 is a string');
    expect(errorOf(() => parse({ m: 'm', columns: { time: [9_200_000_000_000_000_000n], v: [1] } })).message).toContain('out of range');
  });

  test('top-level array of maps and {batch: [...]} give one batch per map', () => {
    const items = [
      { m: 'a', columns: { v: [1] } },
      { m: 'b', columns: { v: [2, 3] } },
    ];
    expect(parse(items).map((b) => [b.measurement, b.length])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    expect(parse({ batch: items }).map((b) => b.measurement)).toEqual(['a', 'b']);
  });

  test('key order does not matter and unknown keys are ignored', () => {
    const b = one({ columns: { v: [1] }, extra: { nested: [1, [2, { x: 'y' }]] }, m: 'late' });
    expect(b.measurement).toBe('late');
  });

  test('names are validated', () => {
    expect(errorOf(() => parse({ m: 'bad.name', columns: { v: [1] } })).message).toContain("invalid measurement name 'bad.name'");
    expect(errorOf(() => parse({ columns: { v: [1] } })).message).toContain("'m' is missing");
    expect(errorOf(() => parse({ m: 'm', columns: { '': [1] } })).message).toContain('column name must not be empty');
    expect(errorOf(() => parse({ m: 'm', columns: { 'a\u0001': [1] } })).message).toContain('control characters');
  });
});

describe('parseMsgpackWrite: row form', () => {
  test('rows are grouped by measurement into columns; absent fields are NULL', () => {
    const batches = parse([
      { m: 'cpu', t: 1700000000000, tags: { host: 'a' }, fields: { usage: 1.5, n: 1 } },
      { m: 'mem', t: 1700000000000, fields: { free: 10 } },
      { fields: { usage: 2, s: 'text' }, tags: { host: 'b', dc: 'x' }, m: 'cpu', t: 1700000001 },
    ]);
    expect(batches.map((b) => [b.measurement, b.length])).toEqual([
      ['cpu', 2],
      ['mem', 1],
    ]);
    const cpu = batches[0];
    expect(Array.from(cpu.time)).toEqual([1_700_000_000_000_000, 1_700_000_001_000_000]);
    expect(cpu.columns.get('host')?.tag).toBe(true);
    expect(values(cpu, 'host')).toEqual(['a', 'b']);
    expect(values(cpu, 'dc')).toEqual([null, 'x']);
    expect(cpu.columns.get('usage')?.type).toBe('float64');
    expect(values(cpu, 'usage')).toEqual([1.5, 2]);
    expect(values(cpu, 'n')).toEqual([1n, null]);
    expect(cpu.columns.get('s')).toEqual({ type: 'string', values: [null, 'text'], valid: null, tag: false });
  });

  test('missing or null t means now', () => {
    const b = one([
      { m: 'm', fields: { v: 1 } },
      { m: 'm', t: null, fields: { v: 2 } },
    ]);
    expect(Array.from(b.time)).toEqual([NOW, NOW]);
  });

  test('an int field later sent as float becomes float64', () => {
    const b = one([
      { m: 'm', fields: { v: 1 } },
      { m: 'm', fields: { v: 2.5 } },
    ]);
    expect(b.columns.get('v')?.type).toBe('float64');
    expect(values(b, 'v')).toEqual([1, 2.5]);
  });

  test('row-form errors name the field and measurement', () => {
    expect(errorOf(() => parse([{ m: 'm', fields: { v: 1 } }, { m: 'm', fields: { v: 'x' } }])).message).toBe(
      "cannot decode field 'v' of measurement 'm': mixed types, row 1 is a string but earlier rows are integers",
    );
    expect(errorOf(() => parse({ m: 'm', tags: { v: 'a' }, fields: { v: 1 } })).message).toContain('it is also a tag');
    expect(errorOf(() => parse({ m: 'm', tags: { h: 1 }, fields: { v: 1 } })).message).toContain('tag values must be strings');
    expect(errorOf(() => parse({ m: 'm', fields: {} })).message).toContain('has no fields');
    expect(errorOf(() => parse({ m: 'm', fields: { time: 1 } })).message).toContain("'time' is reserved");
    expect(errorOf(() => parse({ m: 'm', t: 'now', fields: { v: 1 } })).message).toContain('row 0 is a string');
  });
});

describe('parseMsgpackWrite: malformed bodies', () => {
  test('empty, truncated, trailing bytes, wrong top-level type', () => {
    const good = pack({ m: 'm', columns: { v: [1.5, 2.5] } });
    const p = (b: Uint8Array) => errorOf(() => parseMsgpackWrite(b, { now: NOW })).message;
    expect(p(new Uint8Array(0))).toContain('the body is empty');
    for (let cut = 1; cut < good.length; cut++) expect(errorOf(() => parseMsgpackWrite(good.subarray(0, cut), { now: NOW })).kind).toBe('invalid');
    expect(p(cat([good, new Uint8Array([1, 2])]))).toContain('2 unexpected bytes after the payload');
    expect(p(pack(42))).toContain('expected a map or an array of maps, found integer');
    expect(p(pack([1]))).toContain('item 0 of the array is integer');
    expect(p(pack({ m: 'm' }))).toContain("needs 'columns'");
    expect(p(pack({ m: 'm', columns: [1] }))).toContain("'columns' must be a map");
    expect(p(pack({ m: 'm', columns: { v: 1 } }))).toContain("column 'v': expected an array");
  });

  test('msgpackr records get a hint', () => {
    const body = new Packr().pack({ m: 'm', columns: { v: [1] } });
    expect(errorOf(() => parseMsgpackWrite(body, { now: NOW })).message).toContain('encode with useRecords: false');
  });

  test('a forged array length cannot make the parser allocate', () => {
    // {m: 'm', columns: {v: array32 of 4 billion elements}} in a few bytes.
    const body = cat([new Uint8Array([0x82]), raw.str('m'), raw.str('m'), raw.str('columns'), new Uint8Array([0x81]), raw.str('v'), new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff, 1])]);
    expect(errorOf(() => parseMsgpackWrite(body, { now: NOW })).message).toContain('truncated');
  });

  test('deeply nested unknown values are skipped without recursion', () => {
    const deep = cat([new Uint8Array(100_000).fill(0x91), new Uint8Array([0x01])]);
    const body = cat([new Uint8Array([0x83]), raw.str('m'), raw.str('m'), raw.str('x'), deep, raw.str('columns'), raw.map([[raw.str('v'), raw.arr([raw.int(1)])]])]);
    expect(parseMsgpackWrite(body, { now: NOW })[0].length).toBe(1);
  });
});

/** `{m: 'm', columns: {v: [cells...]}}` from already-packed cells. */
function joinColumns(cells: Uint8Array[], n: number): Uint8Array {
  const head = [0x82, 0xa1, 0x6d, 0xa1, 0x6d, 0xa7, ...new TextEncoder().encode('columns'), 0x81, 0xa1, 0x76, 0xdd, (n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  const out = new Uint8Array(head.length + cells.reduce((k, c) => k + c.length, 0));
  out.set(head);
  let at = head.length;
  for (const c of cells) (out.set(c, at), (at += c.length));
  return out;
}

describe('float64 runs (the fast path that copies a run of float64 values at once)', () => {
  test('fuzzed columns mixing float64 runs with NULLs, integers and float32 read back as written', () => {
    let seed = 28;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const f32 = new Packr({ useRecords: false, useFloat32: 1 }); // float32 encodings break float64 runs (values then read as float32)
    for (let k = 0; k < 60; k++) {
      const n = 1 + Math.floor(rnd() * 3000);
      const breakEvery = 1 + Math.floor(rnd() * 400);
      const column = Array.from({ length: n }, (_, i) => {
        if (i % breakEvery !== breakEvery - 1) return (rnd() - 0.5) * 1e9 + 0.25;
        const r = rnd();
        return r < 0.4 ? null : r < 0.7 ? Math.floor(r * 1000) : r < 0.85 ? 0.5 : 1e-300;
      });
      const leadingNull = rnd() < 0.2;
      if (leadingNull) column[0] = null;
      // Now and then the breaking values go in as float32 (0.5 is exact there): a body joined from two encoders.
      const useF32 = rnd() < 0.3;
      const cells = column.map((v) => (useF32 && v === 0.5 ? f32.pack(v) : packr.pack(v)));
      const bytes = joinColumns(cells, column.length);
      const b = parseMsgpackWrite(bytes, { now: NOW })[0]!;
      const expected = column.map((v) => (v === null ? null : v));
      if (column.every((v) => v === null)) expect(b.columns.has('v')).toBe(false);
      else expect(values(b, 'v')).toEqual(expected);
      expect(b.columns.get('v')?.type ?? 'float64').toBe(column.some((v) => v !== null && !Number.isInteger(v)) ? 'float64' : 'int64');
    }
  });

  test('a float64 run that the body ends inside is refused as truncated, not read past the end', () => {
    const bytes = pack({ m: 'm', columns: { v: [1.5, 2.5, 3.5, 4.5] } });
    const err = errorOf(() => parseMsgpackWrite(bytes.subarray(0, bytes.length - 4), { now: NOW }));
    expect(err.message).toContain('truncated');
  });
});

import { describe, expect, test } from 'bun:test';
import { type ColumnBatch, dictionaryColumn } from '../ingest/index.ts';
import { decodeBatches, encodeBatches } from './batch-codec.ts';
import { makeBatch, rowsOf, sampleBatch } from './test-batches.ts';

const roundTrip = (db: string, batches: ColumnBatch[]) => decodeBatches(encodeBatches(db, batches));

describe('batch codec', () => {
  test('round-trips every column type, NULLs and tag flags', () => {
    const batch = makeBatch('weather', [1, 2, 3], {
      city: { values: ['Paris', null, 'Zürich'], tag: true },
      temp: { values: [1.5, null, -0] },
      count: { values: [1n, -9_223_372_036_854_775_808n, null] },
      ok: { values: [true, false, null] },
      note: { values: ['a "quoted" one', '', null] },
    });
    const out = roundTrip('db1', [batch]);
    expect(out.database).toBe('db1');
    expect(out.batches).toHaveLength(1);
    const got = out.batches[0]!;
    expect(got.measurement).toBe('weather');
    expect(got.length).toBe(3);
    expect(rowsOf(got)).toEqual(rowsOf(batch));
    expect([...got.columns.keys()]).toEqual(['city', 'temp', 'count', 'ok', 'note']);
    const city = got.columns.get('city')!;
    expect(city.type === 'string' && city.tag).toBe(true);
    const note = got.columns.get('note')!;
    expect(note.type === 'string' && note.tag).toBe(false);
    expect(got.columns.get('temp')!.valid).toEqual(Uint8Array.from([1, 0, 1]));
    expect(Object.is((got.columns.get('temp')!.values as Float64Array)[2], -0)).toBe(true);
  });

  test('writes dictionary-coded string columns from their codes, at every id width', () => {
    for (const size of [3, 300, 70_000]) {
      const dictionary = [null, ...Array.from({ length: size }, (_, i) => `v${i}`)];
      const codes = Uint32Array.from([size, 0, 1, size, 2]);
      const batch: ColumnBatch = { measurement: 'm', length: 5, time: Float64Array.from([1, 2, 3, 4, 5]), columns: new Map([['s', dictionaryColumn({ codes, dictionary }, true)]]) };
      const got = roundTrip('db', [batch]).batches[0]!.columns.get('s')!;
      expect(got).toEqual({ type: 'string', values: [`v${size - 1}`, null, 'v0', `v${size - 1}`, 'v1'], valid: null, tag: true });
    }
  });

  test('keeps columns without validity arrays without one', () => {
    const out = roundTrip('d', [makeBatch('m', [1, 2], { v: { values: [1, 2] }, b: { values: [true, true] } })]).batches[0]!;
    expect(out.columns.get('v')!.valid).toBeNull();
    expect(out.columns.get('b')!.valid).toBeNull();
  });

  test('round-trips Unicode, including astral characters and a lone surrogate', () => {
    const values = ['日本語', '🚀 rocket', 'e\u0301', 'lone \ud800 surrogate', 'plain'];
    const out = roundTrip('ü-db', [makeBatch('mé', [1, 2, 3, 4, 5], { s: { values } })]);
    expect(out.database).toBe('ü-db');
    expect(out.batches[0]!.measurement).toBe('mé');
    const got = out.batches[0]!.columns.get('s')!.values as (string | null)[];
    // A lone surrogate is not valid UTF-16; like any UTF-8 encoder we store U+FFFD in its place.
    expect(got).toEqual(['日本語', '🚀 rocket', 'e\u0301', 'lone \ufffd surrogate', 'plain']);
  });

  test('uses wider dictionary ids past 254 and 65534 distinct strings', () => {
    for (const n of [300, 70_000]) {
      const values = Array.from({ length: n }, (_, i) => `v${i}`);
      const time = Array.from({ length: n }, (_, i) => i);
      const got = roundTrip('d', [makeBatch('m', time, { s: { values } })]).batches[0]!;
      expect(got.columns.get('s')!.values).toEqual(values);
    }
  });

  test('encodes only the first `length` rows of over-allocated arrays', () => {
    const b = sampleBatch(10);
    const big = new Float64Array(64);
    big.set(b.time);
    const batch: ColumnBatch = { ...b, length: 4, time: big };
    const got = roundTrip('d', [batch]).batches[0]!;
    expect(got.length).toBe(4);
    expect(got.time).toEqual(b.time.subarray(0, 4));
    expect((got.columns.get('host')!.values as string[]).length).toBe(4);
    expect(got.columns.get('id')!.values).toEqual((b.columns.get('id')!.values as BigInt64Array).subarray(0, 4));
  });

  test('round-trips several batches, an empty batch and no batches', () => {
    const a = sampleBatch(1000, 0, 'cpu');
    const empty = makeBatch('mem', [], {});
    const c = sampleBatch(5, 7, 'disk');
    const out = roundTrip('db', [a, empty, c]);
    expect(out.batches.map((b) => [b.measurement, b.length])).toEqual([
      ['cpu', 1000],
      ['mem', 0],
      ['disk', 5],
    ]);
    expect(rowsOf(out.batches[0]!)).toEqual(rowsOf(a));
    expect(rowsOf(out.batches[2]!)).toEqual(rowsOf(c));
    expect(roundTrip('x', []).batches).toEqual([]);
  });

  test('decoded arrays own their memory', () => {
    const bytes = encodeBatches('d', [sampleBatch(3)]);
    const got = decodeBatches(bytes).batches[0]!;
    bytes.fill(0);
    expect(got.time[0]).toBe(1_700_000_000_000_000);
  });

  test('leaves the reserved prefix for a header', () => {
    const bytes = encodeBatches('d', [sampleBatch(3)], 13);
    expect([...bytes.subarray(0, 13)]).toEqual(new Array(13).fill(0));
    expect(rowsOf(decodeBatches(bytes.subarray(13)).batches[0]!)).toEqual(rowsOf(sampleBatch(3)));
  });

  test('refuses truncated, trailing or foreign bytes with a clear error', () => {
    const bytes = encodeBatches('d', [sampleBatch(20)]);
    expect(() => decodeBatches(bytes.subarray(0, bytes.length - 3))).toThrow(/cannot decode WAL payload: payload ends early/);
    const longer = new Uint8Array(bytes.length + 2);
    longer.set(bytes);
    expect(() => decodeBatches(longer)).toThrow(/unexpected bytes/);
    expect(() => decodeBatches(Uint8Array.from([9, 0, 0]))).toThrow(/unknown format version 9/);
  });
});

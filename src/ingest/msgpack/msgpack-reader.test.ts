import { describe, expect, test } from 'bun:test';
import { Packr } from 'msgpackr';
import { MsgpackReader, T_EXT, T_FLOAT, T_INT } from './msgpack-reader.ts';

const pack = (v: unknown) => new Packr({ useRecords: false }).pack(v);

describe('MsgpackReader', () => {
  test('reads integers of every width', () => {
    const ints = [0, 127, -1, -32, -33, 255, -128, 65535, -32768, 4294967295, -2147483648, 9007199254740991n, -9007199254740991n];
    for (const v of ints) {
      const r = new MsgpackReader(pack(v));
      expect(r.kindAt()).toBe(T_INT);
      expect(r.readInt()).toBe(Number(v));
      expect(r.pos).toBe(r.end);
    }
  });

  test('64-bit integers beyond 2^53 come back as NaN with their words', () => {
    const r = new MsgpackReader(pack(-9223372036854775807n));
    expect(r.readInt()).toBeNaN();
    expect((BigInt(r.hi) << 32n) + BigInt(r.lo)).toBe(-9223372036854775807n);
  });

  test('reads float32 and float64', () => {
    expect(new MsgpackReader(pack(1.5)).readFloat()).toBe(1.5);
    const f32 = new Uint8Array([0xca, 0x3f, 0xc0, 0, 0]);
    const r = new MsgpackReader(f32);
    expect(r.kindAt()).toBe(T_FLOAT);
    expect(r.readFloat()).toBe(1.5);
  });

  test('skips every type, nested ones included', () => {
    const value = { a: [1, -1, 1.5, 'text', null, true, false, new Uint8Array(300), new Date(5), { b: 'x'.repeat(70000) }], c: 2n ** 63n - 1n };
    const body = pack([value, 'after']);
    const r = new MsgpackReader(body);
    expect(r.readArrayHeader()).toBe(2);
    r.skip();
    expect(r.readString()).toBe('after');
    expect(r.pos).toBe(r.end);
  });

  test('classifies extensions and refuses truncated headers', () => {
    expect(new MsgpackReader(pack(new Date(1))).kindAt()).toBe(T_EXT);
    expect(() => new MsgpackReader(new Uint8Array([0xdc, 0x00])).readArrayHeader()).toThrow('truncated');
    expect(() => new MsgpackReader(new Uint8Array([0xa5, 0x61])).readString()).toThrow('truncated');
    expect(() => new MsgpackReader(new Uint8Array(0)).kindAt()).toThrow('truncated');
  });
});

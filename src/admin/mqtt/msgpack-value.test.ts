import { describe, expect, test } from 'bun:test';
import { pack } from 'msgpackr';
import { decodeMsgpack } from './msgpack-value.ts';

describe('MessagePack values', () => {
  test('every type the points use round-trips', () => {
    const value = { a: 1, b: -1, c: -200, d: 70000, e: -70000, f: 1.5, g: 'x'.repeat(40), h: 'é', i: [true, false, null], j: { k: [1, [2]] }, big: 2n ** 62n };
    expect(decodeMsgpack(pack(value))).toEqual(value);
  });

  test('float32, binary and a __proto__ key as plain data', () => {
    expect(decodeMsgpack(new Uint8Array([0xca, 0x3f, 0xc0, 0x00, 0x00]))).toBe(1.5);
    expect(decodeMsgpack(new Uint8Array([0xc4, 0x02, 7, 8]))).toEqual(new Uint8Array([7, 8]));
    const obj = decodeMsgpack(new Uint8Array([0x81, 0xa9, ...new TextEncoder().encode('__proto__'), 0x01])) as Record<string, unknown>;
    expect(Object.getPrototypeOf(obj)).toBe(Object.prototype);
    expect(Object.keys(obj)).toEqual(['__proto__']);
  });

  test('truncated, trailing and unsupported bytes are refused', () => {
    expect(() => decodeMsgpack(new Uint8Array([0x92, 0x01]))).toThrow('truncated');
    expect(() => decodeMsgpack(new Uint8Array([0x01, 0x02]))).toThrow('trailing');
    expect(() => decodeMsgpack(new Uint8Array([0xd4, 0x00, 0x00]))).toThrow('unsupported');
    expect(() => decodeMsgpack(new Uint8Array([0xa2, 0xff, 0xfe]))).toThrow('UTF-8');
  });
});

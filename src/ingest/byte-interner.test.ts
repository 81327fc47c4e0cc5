import { describe, expect, test } from 'bun:test';
import { ByteInterner, HASH_SEED, hashByte, hashBytes } from './byte-interner.ts';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('ByteInterner', () => {
  test('returns the same string object for equal bytes at any offset', () => {
    const interner = new ByteInterner();
    const a = bytes('xxhost_42yy');
    expect(interner.get(a, 2, 9, hashBytes(a, 2, 9))).toBeNull();
    interner.set(a, 2, 9, hashBytes(a, 2, 9), 'host_42');
    const b = bytes('host_42');
    expect(interner.get(b, 0, 7, hashBytes(b, 0, 7))).toBe('host_42');
    expect(interner.get(b, 0, 6, hashBytes(b, 0, 6))).toBeNull();
  });

  test('hashByte folding equals hashBytes', () => {
    const b = bytes('region_3');
    let h = HASH_SEED;
    for (const x of b) h = hashByte(h, x);
    expect(h).toBe(hashBytes(b, 0, b.length));
  });

  test('stays correct past its capacity (it starts over)', () => {
    const interner = new ByteInterner();
    for (let i = 0; i < 20_000; i++) {
      const b = bytes(`value_${i}`);
      const h = hashBytes(b, 0, b.length);
      const got = interner.get(b, 0, b.length, h);
      if (got === null) interner.set(b, 0, b.length, h, `value_${i}`);
      else expect(got).toBe(`value_${i}`);
    }
    const b = bytes('value_19999');
    expect(interner.get(b, 0, b.length, hashBytes(b, 0, b.length))).toBe('value_19999');
  });
});

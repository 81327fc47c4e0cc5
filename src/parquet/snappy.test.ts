import { describe, expect, test } from 'bun:test';
import { snappyUncompress } from 'hyparquet/src/snappy.js';
import { snappyCompress as referencePort } from 'hyparquet-writer/src/snappy.js';
import { snappyCompress, snappyCompressTransient } from './snappy.ts';

/** A seeded generator, so a failure can be replayed. */
function rng(seed: number) {
  return () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

function roundTrip(input: Uint8Array): Uint8Array {
  const packed = snappyCompress(input);
  const out = new Uint8Array(input.length);
  snappyUncompress(packed, out);
  return out;
}

describe('snappy', () => {
  const random = rng(42);
  const shapes: [string, (n: number) => Uint8Array][] = [
    ['zeros', (n) => new Uint8Array(n)],
    ['random bytes', (n) => Uint8Array.from({ length: n }, () => Math.floor(random() * 256))],
    ['periodic (bit-packed tag ids)', (n) => Uint8Array.from({ length: n }, (_, i) => (i * 7) % 100)],
    ['few symbols', (n) => Uint8Array.from({ length: n }, () => Math.floor(random() * 3))],
    ['runs and noise', (n) => Uint8Array.from({ length: n }, (_, i) => (Math.floor(i / 97) % 5 === 0 ? Math.floor(random() * 256) : i % 13))],
    ['doubles', (n) => new Uint8Array(Float64Array.from({ length: Math.ceil(n / 8) }, (_, i) => Math.round(i / 3) / 4).buffer).subarray(0, n)],
  ];
  for (const [name, make] of shapes)
    test(`${name}: decompresses to the input at every size, blocks included`, () => {
      for (const n of [0, 1, 3, 4, 14, 15, 16, 17, 61, 65, 100, 1000, 65535, 65536, 65537, 140_001]) {
        const input = make(n);
        expect(roundTrip(input)).toEqual(input);
      }
    });

  test('compresses as well as the reference port', () => {
    const input = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 7) % 100);
    expect(snappyCompress(input).length).toBeLessThanOrEqual(referencePort(input).length * 1.05);
    const noise = Uint8Array.from({ length: 100_000 }, () => Math.floor(random() * 256));
    expect(snappyCompress(noise).length).toBeLessThan(noise.length * 1.01);
  });

  test('fuzz: 300 random inputs mixing copies and literals', () => {
    for (let k = 0; k < 300; k++) {
      const n = Math.floor(random() * 5000);
      const alphabet = 1 + Math.floor(random() * 255);
      const input = new Uint8Array(n);
      for (let i = 0; i < n; i++) input[i] = random() < 0.3 && i > 8 ? input[i - 1 - Math.floor(random() * Math.min(i - 1, 300))]! : Math.floor(random() * alphabet);
      expect(roundTrip(input)).toEqual(input);
    }
  });

  test('the transient form gives the same bytes as the allocating one, call after call (larger, then smaller inputs)', () => {
    for (const n of [140_001, 70_000, 17, 0, 65_537, 5000]) {
      const input = Uint8Array.from({ length: n }, (_, i) => (random() < 0.5 ? (i * 7) % 100 : Math.floor(random() * 256)));
      expect(Buffer.compare(snappyCompressTransient(input), snappyCompress(input))).toBe(0);
    }
  });
});

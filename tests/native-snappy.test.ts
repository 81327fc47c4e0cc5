/**
 * The C snappy decoder (src/native/snappy.c) against its TypeScript twin (`inflate` in
 * src/ingest/prom/snappy.ts) on fuzzed element streams: every element kind (short and 1-4 byte
 * extended literals, copies with 1, 2 and 4 byte offsets, overlapping copies, copies ending at the
 * last byte), then the same streams corrupted (bytes flipped, cut short, preamble lengths off by a
 * few). Both must give the same bytes, or refuse with the same reason; and snappyjs bodies must
 * decode to what snappyjs decodes. The same C, compiled with AddressSanitizer and
 * UndefinedBehaviorSanitizer into tests/native/snappy-harness.c, runs over the same streams.
 */
import { expect, test } from 'bun:test';
import { join } from 'node:path';
import snappy from 'snappyjs';
import { inflate } from '../src/ingest/prom/snappy.ts';
import { nativeSnappy } from '../src/native/index.ts';
import { runSanitized } from './helpers/sanitized-c.ts';

/** A small deterministic PRNG (mulberry32), so a failure names its seed. */
function rng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) % n) >>> 0;
  };
}

/** A valid element stream (no preamble) of about `target` output bytes, and its output length. */
function elements(seed: number, target: number): { bytes: Uint8Array; length: number } {
  const r = rng(seed);
  const out: number[] = [];
  let op = 0;
  while (op < target) {
    if (op === 0 || r(3) === 0) {
      // Literal: short (1-60) or with 1-4 extra length bytes.
      const extra = r(5);
      const l = extra === 0 ? 1 + r(60) : 61 + r(extra === 1 ? 195 : 2000);
      if (extra === 0) out.push((l - 1) << 2);
      else {
        const bytes = extra;
        out.push((59 + bytes) << 2);
        for (let i = 0, v = l - 1; i < bytes; i++, v = Math.floor(v / 256)) out.push(v & 0xff);
      }
      for (let i = 0; i < l; i++) out.push(r(4) === 0 ? r(256) : 97 + r(4));
      op += l;
      continue;
    }
    const kind = 1 + r(3);
    // Offsets below 8 overlap their own output for most lengths; larger ones take the 8-byte path.
    const offset = 1 + (r(2) === 0 ? r(Math.min(op, 8)) : r(Math.min(op, kind === 1 ? 2047 : 65535)));
    if (kind === 1) {
      const l = 4 + r(8);
      out.push(1 | ((l - 4) << 2) | ((offset >> 8) << 5), offset & 0xff);
      op += l;
    } else {
      const l = 1 + r(64);
      out.push(kind | ((l - 1) << 2), offset & 0xff, (offset >> 8) & 0xff);
      if (kind === 3) out.push(0, 0);
      op += l;
    }
  }
  return { bytes: Uint8Array.from(out), length: op };
}

const native = nativeSnappy();

/** Output bytes or the error message of one decoder. */
function run(decode: (src: Uint8Array, pos: number, out: Uint8Array, len: number) => void, src: Uint8Array, len: number): Uint8Array | string {
  const out = new Uint8Array(len);
  try {
    decode(src, 0, out, len);
    return out;
  } catch (err) {
    return (err as Error).message.replace(/^.*\(/, '').replace(/\)$/, '');
  }
}
const viaNative = (src: Uint8Array, pos: number, out: Uint8Array, len: number) => {
  const error = native!(src, pos, out, len);
  if (error !== null) throw new Error(`(${error})`);
};

test('the C decoder loads here', () => {
  expect(native).not.toBeNull();
});

test('C and TypeScript decode fuzzed element streams of every kind to the same bytes', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const { bytes, length } = elements(seed, 1 + (seed % 7) * 997);
    const js = run(inflate, bytes, length);
    expect(js).toBeInstanceOf(Uint8Array);
    expect(run(viaNative, bytes, length)).toEqual(js);
  }
});

/** Valid and corrupted streams with the output length each claims. */
function corpus(): [Uint8Array, number][] {
  const out: [Uint8Array, number][] = [];
  for (let seed = 1; seed <= 300; seed++) {
    const r = rng(seed * 7919);
    const { bytes, length } = elements(seed, 200 + r(3000));
    const variants: [Uint8Array, number][] = [
      [bytes.subarray(0, r(bytes.length)), length],
      [bytes, length + 1 + r(8)],
      [bytes, Math.max(0, length - 1 - r(8))],
    ];
    const flipped = bytes.slice();
    for (let i = 0; i < 3; i++) flipped[r(flipped.length)] = r(256);
    variants.push([flipped, length]);
    out.push([bytes, length], ...variants);
  }
  return out;
}

test('C and TypeScript refuse the same corrupt streams for the same reason, and agree on the ones that still decode', () => {
  let refused = 0;
  for (const [src, len] of corpus()) {
    const js = run(inflate, src, len);
    if (typeof js === 'string') refused++;
    expect(run(viaNative, src, len)).toEqual(js);
  }
  expect(refused).toBeGreaterThan(500);
});

test('the same C under AddressSanitizer and UndefinedBehaviorSanitizer decodes alike without a report', () => {
  const cases = corpus();
  const parts: Uint8Array[] = [];
  for (const [src, len] of cases) parts.push(new Uint8Array(Uint32Array.of(src.length).buffer), src, new Uint8Array(Uint32Array.of(len).buffer));
  const got = runSanitized(join(import.meta.dir, 'native', 'snappy-harness.c'), Buffer.concat(parts));
  let at = 0;
  for (const [src, len] of cases) {
    const result = Number(got.readBigInt64LE(at));
    const out: Uint8Array = new Uint8Array(got.subarray(at + 8, at + 8 + len));
    at += 8 + len;
    const js = run(inflate, src, len);
    if (typeof js === 'string') expect(result).toBeLessThan(0);
    else {
      expect(result).toBe(0);
      expect(out).toEqual(js);
    }
  }
  expect(at).toBe(got.length);
}, 120_000);

test('snappyjs bodies decode through the C decoder to what snappyjs decodes', () => {
  const r = rng(42);
  for (let i = 0; i < 40; i++) {
    const data = Uint8Array.from({ length: r(200_000) }, (_, k) => (i % 2 ? r(256) : `series_${k % 977}`.charCodeAt(k % 7) || 0));
    const compressed = new Uint8Array(snappy.compress(data));
    let pos = 0;
    while (compressed[pos]! >= 0x80) pos++;
    const out = new Uint8Array(data.length);
    expect(native!(compressed, pos + 1, out, data.length)).toBeNull();
    expect(out).toEqual(new Uint8Array(snappy.uncompress(compressed)));
  }
});

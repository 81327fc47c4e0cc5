/**
 * Rendered forms of short strings (at most 12 bytes: DuckDB keeps them inline in the vector) keyed
 * by their raw bytes, so a tag column of a few hundred distinct values is decoded and escaped a few
 * hundred times instead of once per row. Longer strings are rendered every time.
 */
import type { RawVector } from '../../duckdb/index.ts';

const SLOTS = 4096;
const decoder = new TextDecoder();
/** Keeps the first (len - 4*k) bytes of a 4-byte word, zeroing bytes past the string's end. */
const maskFor = (remaining: number) => (remaining >= 4 ? -1 : remaining <= 0 ? 0 : (1 << (remaining * 8)) - 1);

/** A cache from raw string bytes to `render(text)`: direct-mapped slots, a miss overwrites its slot. */
export class ShortStringCache<T> {
  private readonly keys = new Int32Array(SLOTS * 4);
  private readonly values: (T | undefined)[] = new Array(SLOTS).fill(undefined);

  constructor(private readonly render: (text: string) => T) {}

  /** A reader of rendered string `i` of `raw` (a VARCHAR vector); `long(i, len)` gives the bytes of strings over 12 bytes. */
  reader(raw: RawVector, long: (i: number, len: number) => Uint8Array): (i: number) => T {
    const d = raw.data;
    const w = d.byteOffset % 4 === 0 ? new Int32Array(d.buffer, d.byteOffset, d.byteLength >> 2) : new Int32Array(d.slice().buffer);
    const keys = this.keys;
    const values = this.values;
    const render = this.render;
    return (i) => {
      const len = w[i * 4]!;
      if (len > 12) return render(decoder.decode(long(i, len)));
      const w1 = w[i * 4 + 1]! & maskFor(len);
      const w2 = w[i * 4 + 2]! & maskFor(len - 4);
      const w3 = w[i * 4 + 3]! & maskFor(len - 8);
      const slot = ((Math.imul(Math.imul(w1 ^ len, 0x9e3779b1) ^ w2, 0x85ebca6b) ^ w3) >>> 18) & (SLOTS - 1);
      const k = slot * 4;
      const hit = values[slot];
      if (hit !== undefined && keys[k] === len && keys[k + 1] === w1 && keys[k + 2] === w2 && keys[k + 3] === w3) return hit;
      const value = render(decoder.decode(d.subarray(i * 16 + 4, i * 16 + 4 + len)));
      keys[k] = len;
      keys[k + 1] = w1;
      keys[k + 2] = w2;
      keys[k + 3] = w3;
      values[slot] = value;
      return value;
    };
  }
}

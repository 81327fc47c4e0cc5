import { describe, expect, test } from 'bun:test';
import { Scratch, withScratch } from './scratch.ts';

describe('scratch memory of the direct writer', () => {
  test('a slot is reused while it fits and grows when it does not; slots never share memory', () => {
    const s = new Scratch();
    const a = s.take('a', Float64Array, 1000);
    const b = s.take('b', Uint32Array, 1000);
    expect(a.buffer).not.toBe(b.buffer);
    expect(s.take('a', Uint8Array, 8000).buffer).toBe(a.buffer);
    const grown = s.take('a', Float64Array, 5000);
    expect(grown.buffer).not.toBe(a.buffer);
    expect(grown.length).toBe(5000);
    expect(s.take('a', Float64Array, 10).buffer).toBe(grown.buffer);
  });

  test('past the kept total a take is fresh memory that the scratch does not keep', () => {
    const s = new Scratch();
    const big = s.take('big', Float64Array, 5_000_000); // 40 MB: kept
    expect(s.take('big', Float64Array, 1).buffer).toBe(big.buffer);
    const over = s.take('other', Float64Array, 2_000_000); // 16 MB more: past 48 MB, not kept
    expect(over.length).toBe(2_000_000);
    expect(s.take('other', Float64Array, 2_000_000).buffer).not.toBe(over.buffer);
  });

  test('flushes running at the same time get different scratches', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const seen: Scratch[] = [];
    const first = withScratch(async (s) => (seen.push(s), await gate));
    await withScratch(async (s) => void seen.push(s));
    release();
    await first;
    expect(seen[0]).not.toBe(seen[1]);
  });
});

import { describe, expect, test } from 'bun:test';
import { encodeBatches } from '../wal/index.ts';
import { rowsOf, sampleBatch } from '../wal/test-batches.ts';
import { coveredPut, decodeSegment, encodeEntry, encodeSegment, fullyCovered, SharedTicket, SharedWalKeys, type SharedWalState } from './shared-wal-state.ts';

describe('shared WAL segment objects', () => {
  const entries = [
    { database: 'a', batch: sampleBatch(3, 0, 'cpu') },
    { database: 'b', batch: sampleBatch(1, 10, 'mem') },
  ];

  test('round-trip: every entry keeps its database and rows, in order', async () => {
    const back = decodeSegment(encodeSegment(await Promise.all(entries.map((e) => encodeEntry(e.database, e.batch)))));
    expect(back.map((e) => e.database)).toEqual(['a', 'b']);
    expect(back.map((e) => rowsOf(e.batches[0]!))).toEqual(entries.map((e) => rowsOf(e.batch)));
  });

  test('a segment compressed whole (as an older primary wrote it) reads the same', () => {
    const parts = entries.map((e) => encodeBatches(e.database, [e.batch]));
    const raw = new Uint8Array(4 + parts.reduce((n, p) => n + 4 + p.length, 0));
    const view = new DataView(raw.buffer);
    view.setUint32(0, parts.length, true);
    let at = 4;
    for (const p of parts) {
      view.setUint32(at, p.length, true);
      raw.set(p, at + 4);
      at += 4 + p.length;
    }
    const old = new Uint8Array([...new TextEncoder().encode('SVCSWAL2'), ...Bun.zstdCompressSync(raw, { level: 1 })]);
    const back = decodeSegment(old);
    expect(back.map((e) => e.database)).toEqual(['a', 'b']);
    expect(back.map((e) => rowsOf(e.batches[0]!))).toEqual(entries.map((e) => rowsOf(e.batch)));
  });

  test('an object that is not a segment, or a truncated one, is refused', async () => {
    expect(() => decodeSegment(new TextEncoder().encode('not a segment at all'))).toThrow('bad magic');
    const whole = encodeSegment([await encodeEntry('a', sampleBatch(5))]);
    expect(() => decodeSegment(whole.subarray(0, whole.length - 3))).toThrow('truncated');
    const two = encodeSegment(await Promise.all(entries.map((e) => encodeEntry(e.database, e.batch))));
    expect(() => decodeSegment(two.subarray(0, two.length - 3))).toThrow('truncated');
  });
});

describe('covered records', () => {
  const keys = new SharedWalKeys('/svc/v1/t');

  test('name the entries of the shared WAL tickets only, grouped by segment', () => {
    const put = coveredPut(keys, [new SharedTicket('s1', 0, 1), { segment: 3, offset: 0 }, new SharedTicket('s1', 2, 1), new SharedTicket('s2', 1, 1)]);
    expect(put!.key.startsWith('/svc/v1/t/wal/covered/')).toBe(true);
    expect(JSON.parse(put!.value)).toEqual({ segments: { s1: [0, 2], s2: [1] } });
    expect(coveredPut(keys, [{ segment: 3, offset: 0 }])).toBeNull();
  });

  test('a segment is fully covered only when every entry is', () => {
    const state: SharedWalState = { revision: 1, segments: [], covered: new Map([['s1', new Set([0, 2])], ['s2', new Set([1, 0])]]), coveredKeys: [], withdrawn: [] };
    expect(fullyCovered(state, 's1', 3)).toBe(false);
    expect(fullyCovered(state, 's1', 2)).toBe(false);
    expect(fullyCovered(state, 's2', 2)).toBe(true);
    expect(fullyCovered(state, 's9', 1)).toBe(false);
  });
});

import { describe, expect, test } from 'bun:test';
import { rowsOf, sampleBatch } from '../wal/test-batches.ts';
import { coveredPut, decodeSegment, encodeSegment, fullyCovered, SharedTicket, SharedWalKeys, type SharedWalState } from './shared-wal-state.ts';

describe('shared WAL segment objects', () => {
  test('round-trip: every entry keeps its database and rows, in order', () => {
    const entries = [
      { database: 'a', batch: sampleBatch(3, 0, 'cpu') },
      { database: 'b', batch: sampleBatch(1, 10, 'mem') },
    ];
    const back = decodeSegment(encodeSegment(entries));
    expect(back.map((e) => e.database)).toEqual(['a', 'b']);
    expect(back.map((e) => rowsOf(e.batches[0]!))).toEqual(entries.map((e) => rowsOf(e.batch)));
  });

  test('an object that is not a segment, or a truncated one, is refused', () => {
    expect(() => decodeSegment(new TextEncoder().encode('not a segment at all'))).toThrow('bad magic');
    const whole = encodeSegment([{ database: 'a', batch: sampleBatch(5) }]);
    expect(() => decodeSegment(whole.subarray(0, whole.length - 3))).toThrow('truncated');
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
    const state: SharedWalState = { revision: 1, segments: [], covered: new Map([['s1', new Set([0, 2])], ['s2', new Set([1, 0])]]), coveredKeys: [] };
    expect(fullyCovered(state, 's1', 3)).toBe(false);
    expect(fullyCovered(state, 's1', 2)).toBe(false);
    expect(fullyCovered(state, 's2', 2)).toBe(true);
    expect(fullyCovered(state, 's9', 1)).toBe(false);
  });
});

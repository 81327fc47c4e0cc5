import { expect, test } from 'bun:test';
import { unpack } from 'msgpackr';
import { encodeColumnar } from './msgpack-encode.ts';

test('columnar payload decodes with a standard MessagePack reader; floats stay floats', () => {
  const long = 'é'.repeat(40_000);
  const bytes = encodeColumnar('memories', [
    { name: 'time', kind: 'int', values: [1_700_000_000_000_001, 0] },
    { name: 'content', kind: 'string', values: ['héllo ✓ 😀', long] },
    { name: 'importance', kind: 'float', values: [0, 1] },
  ]);
  const d = unpack(bytes) as { m: string; columns: Record<string, unknown[]> };
  expect(d.m).toBe('memories');
  expect(d.columns.time!.map(Number)).toEqual([1_700_000_000_000_001, 0]);
  expect(d.columns.content).toEqual(['héllo ✓ 😀', long]);
  expect(d.columns.importance).toEqual([0, 1]);
  // 0xcb marks a float64 on the wire even for whole numbers.
  expect(bytes.filter((b) => b === 0xcb).length).toBeGreaterThanOrEqual(2);
  const many = encodeColumnar('m', [{ name: 's', kind: 'string', values: Array.from({ length: 70_000 }, (_, i) => `v${i}`) }]);
  expect((unpack(many) as { columns: { s: string[] } }).columns.s[69_999]).toBe('v69999');
});

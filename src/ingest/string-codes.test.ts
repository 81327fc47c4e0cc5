import { expect, test } from 'bun:test';
import { ByteInterner } from './byte-interner.ts';
import { StringCodes } from './string-codes.ts';

const bytes = (s: string) => Buffer.from(s);
const valuesOf = (codes: StringCodes, n: number) => {
  const { codes: c, dictionary } = codes.finish(n);
  return Array.from(c, (x) => dictionary[x]);
};

// Slot tables go back to a spare list at `finish` (page faults of fresh tables): a table must never
// serve two columns at once, and a column used after `finish` must still map every value right.
test('slot tables reused across columns keep every column its own values', () => {
  const interner = new ByteInterner();
  const set = (c: StringCodes, row: number, s: string) => c.set(row, bytes(s), 0, s.length);
  const first = new StringCodes(4, interner);
  set(first, 0, 'a');
  set(first, 1, 'b');
  expect(valuesOf(first, 2)).toEqual(['a', 'b']);
  expect(valuesOf(first, 2)).toEqual(['a', 'b']); // finished twice: its table is given back once
  // Two live columns, at least one on a table the first used.
  const x = new StringCodes(4, interner);
  const y = new StringCodes(4, interner);
  for (const [row, a, b] of [[0, 'b', 'a'], [1, 'a', 'c'], [2, 'c', 'b'], [3, 'a', 'a']] as const) {
    set(x, row, a);
    set(y, row, b);
  }
  // The first column is written again after finish: it takes a table of its own.
  set(first, 2, 'c');
  set(first, 3, 'a');
  const z = new StringCodes(2, interner);
  set(z, 0, 'c');
  set(z, 1, 'b');
  expect(valuesOf(x, 4)).toEqual(['b', 'a', 'c', 'a']);
  expect(valuesOf(y, 4)).toEqual(['a', 'c', 'b', 'a']);
  expect(valuesOf(first, 4)).toEqual(['a', 'b', 'c', 'a']);
  expect(valuesOf(z, 2)).toEqual(['c', 'b']);
});

import { describe, expect, test } from 'bun:test';
import { blamesTheRows } from './set-aside.ts';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('blamesTheRows', () => {
  test('failures of the rows count towards setting them aside', () => {
    expect(blamesTheRows(new Error('Out of Memory Error: failed to allocate data of size 2.0 GiB'))).toBe(true);
    expect(blamesTheRows(new RangeError('Out of memory'))).toBe(true);
    expect(blamesTheRows(new Error('flush worker failed: worker terminated'))).toBe(true);
    expect(blamesTheRows(new Error('Invalid Input Error: invalid unicode'))).toBe(true);
  });

  test('failures of storage or the disk never do', () => {
    expect(blamesTheRows(withCode('write failed', 'ENOSPC'))).toBe(false);
    expect(blamesTheRows(new Error('IO Error: Could not write file "x": No space left on device'))).toBe(false);
    expect(blamesTheRows(new Error('cannot write a/b.parquet to s3://x: ECONNREFUSED'))).toBe(false);
    expect(blamesTheRows(new Error('IO Error: Read-only file system'))).toBe(false);
    expect(blamesTheRows(new Error('flush worker did not start in time'))).toBe(false);
  });
});

import { describe, expect, test } from 'bun:test';
import { type Column, type ColumnBatch, dictionaryColumn } from './column-batch.ts';
import { batchBytes } from './column-bytes.ts';
import { parseLineProtocol } from './lineprotocol/index.ts';

const batchOf = (length: number, columns: [string, Column][]): ColumnBatch => ({ measurement: 'm', length, time: new Float64Array(length), columns: new Map(columns) });

describe('batchBytes', () => {
  test('typed arrays by their size, validity included', () => {
    const b = batchOf(10, [
      ['f', { type: 'float64', values: new Float64Array(10), valid: new Uint8Array(10), tag: false }],
      ['i', { type: 'int64', values: new BigInt64Array(10), valid: null, tag: false }],
    ]);
    expect(batchBytes(b)).toBe(80 + 80 + 10 + 80);
  });

  test('strings by their characters: one huge value counts whole, in a dictionary or a plain column', () => {
    const huge = 'x'.repeat(1 << 20);
    const dict = dictionaryColumn({ codes: new Uint32Array([1, 1, 2]), dictionary: [null, huge, 'a'] }, true);
    expect(batchBytes(batchOf(3, [['t', dict]]))).toBe(24 + 12 + (1 << 20) + 1 + 3 * 16);
    const plain: Column = { type: 'string', values: [huge, null, 'ab'], valid: null, tag: false };
    expect(batchBytes(batchOf(3, [['s', plain]]))).toBe(24 + 3 * 8 + (1 << 20) + 2);
  });

  test('a parsed body counts what its parser kept', () => {
    const body = Array.from({ length: 100 }, (_, i) => `m,host=h${i % 4} s="${'y'.repeat(1000)}" ${i}`).join('\n');
    const [b] = parseLineProtocol(body, { precision: 'us', now: 0 }).batches;
    const bytes = batchBytes(b!);
    expect(bytes).toBeGreaterThanOrEqual(100 * 1000);
    expect(bytes).toBeLessThan(100 * 1000 * 1.2);
  });
});

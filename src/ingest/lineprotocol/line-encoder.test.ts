import { describe, expect, test } from 'bun:test';
import type { Column, ColumnBatch } from '../column-batch.ts';
import { values } from '../test-support.ts';
import { encodeLineProtocol, parseLineProtocol } from './index.ts';

function batch(): ColumnBatch {
  const columns = new Map<string, Column>();
  columns.set('host', { type: 'string', values: ['a b,c=d\\', null, ''], valid: null, tag: true });
  columns.set('note', { type: 'string', values: ['say "hi" \\ there', 'line\nbreak', null], valid: null, tag: false });
  columns.set('v', { type: 'float64', values: Float64Array.from([1.5, 2, Infinity]), valid: Uint8Array.from([1, 1, 1]), tag: false });
  columns.set('n', { type: 'int64', values: BigInt64Array.from([-9007199254740993n, 0n, 0n]), valid: Uint8Array.from([1, 0, 0]), tag: false });
  columns.set('ok', { type: 'bool', values: Uint8Array.from([1, 0, 0]), valid: Uint8Array.from([1, 1, 0]), tag: false });
  return { measurement: 'm', length: 3, time: Float64Array.from([1_700_000_000_000_001, 1_700_000_000_000_002, 1_700_000_000_000_003]), columns };
}

describe('encodeLineProtocol', () => {
  test('reads back as the same rows with precision us; what line protocol cannot carry is said', () => {
    const text = encodeLineProtocol(batch());
    expect(text.split('\n')[2]).toBe('# no field value: m 1700000000000003');
    const r = parseLineProtocol(text, { precision: 'us', now: 0 });
    expect(r.errors).toEqual([]);
    const b = r.batches[0]!;
    expect(Array.from(b.time)).toEqual([1_700_000_000_000_001, 1_700_000_000_000_002]);
    expect(values(b, 'host')).toEqual(['a b,c=d\\', null]);
    expect(values(b, 'note')).toEqual(['say "hi" \\ there', 'line\\nbreak']);
    expect(values(b, 'v')).toEqual([1.5, 2]);
    expect(values(b, 'n')).toEqual([-9007199254740993n, null]);
    expect(values(b, 'ok')).toEqual([true, false]);
  });

  test('a row range', () => {
    expect(encodeLineProtocol(batch(), 1, 2)).toBe('m note="line\\nbreak",v=2,ok=false 1700000000000002\n');
  });
});

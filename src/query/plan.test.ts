import { describe, expect, test } from 'bun:test';
import { boundsOf, topNFiles } from './plan.ts';
import type { TimeCondition } from './sql/references.ts';
import type { SourceFile } from './table-source.ts';

const c = (op: TimeCondition['op'], usesNow = false): TimeCondition => ({ op, value: {}, usesNow });
const f = (minTime: number, maxTime: number, rows: number): SourceFile => ({ key: `${minTime}`, minTime, maxTime, rows, bytes: 0 });

describe('boundsOf', () => {
  test('intersects AND-ed bounds, inclusive, ignoring unknown values', () => {
    expect(boundsOf([c('>='), c('>'), c('<'), c('<=')], [10, 20, 100, 90])).toEqual({ minTime: 20, maxTime: 90 });
    expect(boundsOf([c('=')], [5])).toEqual({ minTime: 5, maxTime: 5 });
    expect(boundsOf([c('>='), c('<=')], [null, 7])).toEqual({ maxTime: 7 });
  });
  test('upper bounds that read the clock are not used', () => {
    expect(boundsOf([c('>=', true), c('<=', true)], [10, 20])).toEqual({ minTime: 10 });
  });
});

describe('topNFiles', () => {
  const files = [f(0, 99, 10), f(100, 199, 10), f(200, 299, 10), f(150, 250, 5)];
  test('newest files until the limit is met, plus files overlapping that span', () => {
    expect(topNFiles(files, 5, 'desc').map((x) => x.key)).toEqual(['200', '150']);
    expect(topNFiles(files, 16, 'desc').map((x) => x.key)).toEqual(['100', '200', '150']);
    expect(topNFiles(files, 10, 'asc').map((x) => x.key)).toEqual(['0']);
  });
  test('not enough rows: every file', () => expect(topNFiles(files, 1000, 'desc')).toHaveLength(4));
});

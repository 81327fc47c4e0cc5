/** Helpers shared by the ingest parsers' unit tests (not part of the ingest API). */
import { expect } from 'bun:test';
import { AppError } from '../lib/errors.ts';
import type { Column, ColumnBatch } from './column-batch.ts';

/** Column values as plain JS values, NULL as null. */
export function values(batch: ColumnBatch, name: string): unknown[] {
  const col = batch.columns.get(name) as Column;
  expect(col).toBeDefined();
  const out: unknown[] = [];
  for (let i = 0; i < batch.length; i++) {
    if (col.valid !== null && col.valid[i] === 0) out.push(null);
    else if (col.type === 'bool') out.push(col.values[i] === 1);
    else out.push(col.values[i]);
  }
  return out;
}

/** The AppError `fn` throws; any other outcome fails the test. */
export function errorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a throw');
}

/**
 * Dictionary encoding of a string column across batches: the distinct values plus one id per row.
 * Low-cardinality columns (tags) then travel into DuckDB as ENUM ids copied a chunk at a time
 * instead of one native call per string.
 */
import type { Column, ColumnBatch } from '../ingest/index.ts';

/** Above this many distinct values a column is written value by value as VARCHAR instead. */
export const MAX_DICTIONARY = 4096;

/** Distinct values, one id per row (0 where the row is NULL), and per-row validity when any row is NULL. */
export interface EncodedStrings {
  dictionary: string[];
  ids: Uint32Array;
  valid: Uint8Array | null;
}

/** The text form of value `i` of any column, or null: used when mixed types widen a column to string. */
export function stringAt(col: Column | undefined, i: number): string | null {
  if (!col) return null;
  if (col.type === 'string') return col.values[i] ?? null;
  if (col.valid !== null && col.valid[i] === 0) return null;
  if (col.type === 'bool') return col.values[i] ? 'true' : 'false';
  return String(col.values[i]);
}

/** Dictionary-encodes column `name` over `batches` (`total` rows), or null when it has too many distinct values. */
export function encodeStrings(batches: readonly ColumnBatch[], name: string, total: number, limit = MAX_DICTIONARY): EncodedStrings | null {
  const index = new Map<string, number>();
  const dictionary: string[] = [];
  const ids = new Uint32Array(total);
  let valid: Uint8Array | null = null;
  let row = 0;
  for (const b of batches) {
    const col = b.columns.get(name);
    const direct = col?.type === 'string' ? col.values : null;
    for (let i = 0; i < b.length; i++, row++) {
      const v = direct ? (direct[i] ?? null) : stringAt(col, i);
      if (v === null) {
        if (valid === null) valid = new Uint8Array(total).fill(1);
        valid[row] = 0;
        continue;
      }
      let id = index.get(v);
      if (id === undefined) {
        if (dictionary.length >= limit || v.includes('\0')) return null;
        id = dictionary.length;
        index.set(v, id);
        dictionary.push(v);
      }
      ids[row] = id;
    }
  }
  return { dictionary, ids, valid };
}

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
  if (col.type === 'string') return col.dict ? (col.dict.dictionary[col.dict.codes[i]!] ?? null) : (col.values[i] ?? null);
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
  /** The id of `v`, adding it; -1 when the dictionary is full (or `v` cannot be an ENUM member). */
  const idOf = (v: string): number => {
    let id = index.get(v);
    if (id === undefined) {
      if (dictionary.length >= limit || v.includes('\0')) return -1;
      id = dictionary.length;
      index.set(v, id);
      dictionary.push(v);
    }
    return id;
  };
  for (const b of batches) {
    const col = b.columns.get(name);
    if (col?.type === 'string' && col.dict) {
      // Parser-made codes: only the batch's small dictionary is hashed, rows are remapped by array lookup.
      const { codes, dictionary: local } = col.dict;
      const remap = new Int32Array(local.length);
      for (let k = 0; k < local.length; k++) {
        const v = local[k];
        remap[k] = v === null || v === undefined ? -1 : idOf(v);
        if (remap[k] === -1 && v !== null && v !== undefined) return null;
      }
      if (remapRows(codes, remap, ids, row, b.length)) {
        if (valid === null) valid = new Uint8Array(total).fill(1);
        for (let i = 0; i < b.length; i++) if (remap[codes[i]!]! < 0) valid[row + i] = 0;
      }
      row += b.length;
      continue;
    }
    const direct = col?.type === 'string' ? col.values : null;
    for (let i = 0; i < b.length; i++, row++) {
      const v = direct ? (direct[i] ?? null) : stringAt(col, i);
      if (v === null) {
        if (valid === null) valid = new Uint8Array(total).fill(1);
        valid[row] = 0;
        continue;
      }
      const id = idOf(v);
      if (id < 0) return null;
      ids[row] = id;
    }
  }
  return { dictionary, ids, valid };
}

/** ids[at + i] = remap[codes[i]] for n rows; returns whether any row mapped to -1 (NULL, stored as id 0). */
function remapRows(codes: Uint32Array, remap: Int32Array, ids: Uint32Array, at: number, n: number): boolean {
  // A tight, monomorphic loop: this runs once per string value of every flushed row.
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const id = remap[codes[i]!]!;
    nulls |= id;
    ids[at + i] = id < 0 ? 0 : id;
  }
  return nulls < 0;
}

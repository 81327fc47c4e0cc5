/**
 * ColumnBatches in a form that crosses a thread boundary (postMessage) cheaply: arrays in shared
 * memory (what the parsers make) are shared as they are; any other is copied once into a buffer of
 * its own, which is then transferred, not cloned a second time. String columns travel as codes plus
 * their dictionary, so no per-row strings are cloned.
 */
import { type Column, type ColumnBatch, dictionaryColumn } from './column-batch.ts';
import { coalesceSmallBatches } from './coalesce-batches.ts';
import { isShared } from './shared-arrays.ts';

/** One column on the wire (a structured-clone-friendly ColumnBatch column). */
export type WireColumn =
  | { name: string; kind: 'typed'; column: Exclude<Column, { type: 'string' }> }
  | { name: string; kind: 'codes'; tag: boolean; codes: Uint32Array; dictionary: (string | null)[] };

/** One ColumnBatch on the wire. */
export interface WireBatch {
  measurement: string;
  length: number;
  time: Float64Array;
  columns: WireColumn[];
}

/** `a` itself when it is shared memory, else a compact copy whose buffer is transferred (the original stays untouched). */
function own<T extends Float64Array | BigInt64Array | Uint8Array | Uint32Array>(a: T, transfer: ArrayBuffer[]): T {
  if (isShared(a)) return a;
  const copy = a.slice() as T;
  transfer.push(copy.buffer as ArrayBuffer);
  return copy;
}

/**
 * Plain strings as codes: a structured clone copies every string it meets, which for a tag column of
 * interned values (line protocol) cost more than parsing them; here each distinct value crosses once.
 */
function encode(values: readonly (string | null)[], length: number): { codes: Uint32Array; dictionary: (string | null)[] } {
  const codes = new Uint32Array(new SharedArrayBuffer(length * 4));
  const dictionary: (string | null)[] = [null];
  const index = new Map<string, number>();
  for (let i = 0; i < length; i++) {
    const v = values[i];
    if (v === null || v === undefined) continue;
    let code = index.get(v);
    if (code === undefined) index.set(v, (code = dictionary.push(v) - 1));
    codes[i] = code;
  }
  return { codes, dictionary };
}

/** Batches as wire batches plus the buffers to pass as postMessage's transfer list (runs of small batches joined first). */
export function toWire(batches: readonly ColumnBatch[]): { batches: WireBatch[]; transfer: ArrayBuffer[] } {
  const transfer: ArrayBuffer[] = [];
  const out = coalesceSmallBatches(batches).map((b): WireBatch => {
    const columns: WireColumn[] = [];
    for (const [name, col] of b.columns) {
      if (col.type !== 'string') {
        const values = own(col.values, transfer);
        const valid = col.valid === null ? null : own(col.valid, transfer);
        columns.push({ name, kind: 'typed', column: { ...col, values, valid } as Exclude<Column, { type: 'string' }> });
      } else if (col.dict) columns.push({ name, kind: 'codes', tag: col.tag, codes: own(col.dict.codes, transfer), dictionary: col.dict.dictionary });
      else columns.push({ name, kind: 'codes', tag: col.tag, ...encode(col.values, b.length) });
    }
    return { measurement: b.measurement, length: b.length, time: own(b.time, transfer), columns };
  });
  return { batches: out, transfer };
}

/** The ColumnBatches that `toWire` sent. */
export function fromWire(batches: readonly WireBatch[]): ColumnBatch[] {
  return batches.map((b) => {
    const columns = new Map<string, Column>();
    for (const c of b.columns) {
      if (c.kind === 'typed') columns.set(c.name, c.column);
      else columns.set(c.name, dictionaryColumn({ codes: c.codes, dictionary: c.dictionary }, c.tag));
    }
    return { measurement: b.measurement, length: b.length, time: b.time, columns };
  });
}

/**
 * Fills DuckDB data chunks from ColumnBatches by copying typed arrays (no per-value calls except for
 * high-cardinality strings). Shared by the appender path (table-loader.ts) and the table function
 * that streams rows straight into a COPY (batch-scan.ts).
 */
import { BIGINT, BOOLEAN, DOUBLE, type DuckDBDataChunk, type DuckDBType, ENUM, VARCHAR } from '../duckdb/index.ts';
import type { ColumnBatch } from '../ingest/index.ts';
import { type SchemaColumn, unionSchema } from './schema.ts';
import { type EncodedStrings, encodeStrings, stringAt } from './string-dictionary.ts';
import { type OpenVector, openVector, writeMicrosAsInt64 } from './vector-access.ts';

/** DuckDB's vector size: a chunk holds at most this many rows. */
export const CHUNK_ROWS = 2048;

/** How one union column goes into chunks: its SQL type, chunk type, and dictionary ids when it has them. */
export type Plan = SchemaColumn & { sqlType: string; chunkType: DuckDBType; encoded: EncodedStrings | null };

const quoteLiteral = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Plans the union of the batches' columns; string columns with few distinct values get ids (ENUM when `strings` is 'enum'). */
export function planColumns(batches: readonly ColumnBatch[], total: number, strings: 'enum' | 'varchar'): Plan[] {
  const seen = new Set<string>();
  return unionSchema(batches).map((c): Plan => {
    const lower = c.name.toLowerCase();
    if (lower === 'time') throw new Error(`cannot load rows: a column may not be named '${c.name}' (the timestamp column is 'time')`);
    if (seen.has(lower)) throw new Error(`cannot load rows: columns differing only in case ('${c.name}') are not supported`);
    seen.add(lower);
    if (c.type === 'float64') return { ...c, sqlType: 'DOUBLE', chunkType: DOUBLE, encoded: null };
    if (c.type === 'int64') return { ...c, sqlType: 'BIGINT', chunkType: BIGINT, encoded: null };
    if (c.type === 'bool') return { ...c, sqlType: 'BOOLEAN', chunkType: BOOLEAN, encoded: null };
    const encoded = encodeStrings(batches, c.name, total);
    if (!encoded) return { ...c, sqlType: 'VARCHAR', chunkType: VARCHAR, encoded: null };
    const sqlType = strings === 'enum' && encoded.dictionary.length > 0 ? `ENUM(${encoded.dictionary.map(quoteLiteral).join(', ')})` : 'VARCHAR';
    // An empty ENUM is not a type; a column of only NULLs goes in as VARCHAR.
    const chunkType = encoded.dictionary.length > 0 ? ENUM(encoded.dictionary) : VARCHAR;
    return { ...c, sqlType, chunkType, encoded: encoded.dictionary.length > 0 ? encoded : null };
  });
}

/** Where a fill stands in the batch list: batch `bi` starts at global row `bStart`. Advance-only. */
export interface Cursor {
  bi: number;
  bStart: number;
}

type Segments = (fn: (b: ColumnBatch, from: number, to: number, at: number) => void) => void;

/**
 * Writes global rows [g, g+n) into `chunk`: column 0 is `time`, then one column per plan, then (when
 * `ordinal`) the global row number as BIGINT. `valid` is scratch space of CHUNK_ROWS bytes.
 */
export function fillChunk(chunk: DuckDBDataChunk, vectors: OpenVector[] | null, batches: readonly ColumnBatch[], plans: readonly Plan[], cur: Cursor, g: number, n: number, valid: Uint8Array, ordinal = false): void {
  while (cur.bStart + batches[cur.bi]!.length <= g) cur.bStart += batches[cur.bi++]!.length;
  chunk.rowCount = n;
  const vec = (k: number) => (vectors ? vectors[k]! : openVector(chunk, k));
  const segments: Segments = (fn) => {
    for (let i = cur.bi, s = cur.bStart, at = 0; at < n; s += batches[i]!.length, i++) {
      const b = batches[i]!;
      const from = g + at - s;
      const to = Math.min(b.length, from + (n - at));
      if (to > from) fn(b, from, to, at);
      at += Math.max(0, to - from);
    }
  };
  const tv = vec(0);
  segments((b, from, to, at) => writeMicrosAsInt64(tv.bytes, at, b.time, from, to));
  tv.flush();
  for (let k = 0; k < plans.length; k++) fillColumn(vec(k + 1), plans[k]!, g, n, segments, valid);
  if (ordinal) {
    const ov = vec(plans.length + 1);
    const out = new Int32Array(ov.bytes.buffer, ov.bytes.byteOffset, 2 * n);
    // Row numbers stay far below 2^31: the high words are the zeros the vector started with.
    for (let i = 0; i < n; i++) (out[2 * i] = g + i), (out[2 * i + 1] = 0);
    ov.flush();
  }
}

/** Writes rows [g, g+n) of one planned column into a chunk vector. */
function fillColumn(v: OpenVector, p: Plan, g: number, n: number, segments: Segments, valid: Uint8Array): void {
  if (p.encoded) {
    const { ids, valid: ev, dictionary } = p.encoded;
    const target = dictionary.length < 256 ? v.bytes : dictionary.length < 65536 ? new Uint16Array(v.bytes.buffer, v.bytes.byteOffset, n) : new Uint32Array(v.bytes.buffer, v.bytes.byteOffset, n);
    target.set(ids.subarray(g, g + n));
    v.setValidity(ev && ev.subarray(g, g + n).includes(0) ? ev.subarray(g, g + n) : null, n);
    v.flush();
    return;
  }
  if (p.type === 'string') {
    segments((b, from, to, at) => {
      const col = b.columns.get(p.name);
      for (let i = from; i < to; i++) v.setItem(at + i - from, stringAt(col, i));
    });
    v.flush();
    return;
  }
  let anyNull = false;
  const f64 = p.type === 'float64' ? new Float64Array(v.bytes.buffer, v.bytes.byteOffset, n) : null;
  const i64 = p.type === 'int64' ? new BigInt64Array(v.bytes.buffer, v.bytes.byteOffset, n) : null;
  segments((b, from, to, at) => {
    const col = b.columns.get(p.name);
    if (!col || col.type === 'string') {
      valid.fill(0, at, at + to - from);
      anyNull = true;
      return;
    }
    if (col.valid) {
      const src = col.valid.subarray(from, to);
      valid.set(src, at);
      anyNull ||= src.includes(0);
    } else valid.fill(1, at, at + to - from);
    if (f64) {
      if (col.type === 'float64') f64.set(col.values.subarray(from, to), at);
      else if (col.type === 'int64') for (let i = from; i < to; i++) f64[at + i - from] = Number(col.values[i]);
    } else if (i64 && col.type === 'int64') i64.set(col.values.subarray(from, to), at);
    else if (p.type === 'bool' && col.type === 'bool') v.bytes.set(col.values.subarray(from, to), at);
  });
  v.setValidity(anyNull ? valid : null, n);
  v.flush();
}

/**
 * Fills DuckDB data chunks from ColumnBatches by copying typed arrays (no per-value calls except for
 * high-cardinality strings). Shared by the appender path (table-loader.ts) and the table function
 * that streams rows straight into a COPY (batch-scan.ts).
 */
import {
  BIGINT,
  BOOLEAN,
  chunkVector,
  copyIntoVector,
  DOUBLE,
  type DuckDBDataChunk,
  type DuckDBType,
  ENUM,
  setVectorString,
  setVectorValidity,
  VARCHAR,
  type VectorHandle,
} from '../duckdb/index.ts';
import type { ColumnBatch } from '../ingest/index.ts';
import { type SchemaColumn, unionSchema } from './schema.ts';
import { type EncodedStrings, encodeStrings, stringAt } from './string-dictionary.ts';

/** DuckDB's vector size: a chunk holds at most this many rows. */
export const CHUNK_ROWS = 2048;

/** How one union column goes into chunks: its SQL type, chunk type, and dictionary ids when it has them. */
export type Plan = SchemaColumn & { sqlType: string; chunkType: DuckDBType; encoded: EnumIds | null };

/** Dictionary ids, and (made on first use by a chunk fill) the same ids at the ENUM's physical width (1, 2 or 4 bytes), so chunks take them by plain copy. */
type EnumIds = EncodedStrings & { narrow?: Uint8Array | Uint16Array | Uint32Array };

/** The ids at the ENUM's physical width; the direct writer never needs them, so they are made lazily. */
function narrowIds(e: EnumIds): Uint8Array | Uint16Array | Uint32Array {
  const size = e.dictionary.length;
  return (e.narrow ??= size < 256 ? Uint8Array.from(e.ids) : size < 65536 ? Uint16Array.from(e.ids) : e.ids);
}

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
    if (encoded.dictionary.length === 0) return { ...c, sqlType, chunkType, encoded: null };
    return { ...c, sqlType, chunkType, encoded };
  });
}

/** Where a fill stands in the batch list (batch `bi` starts at global row `bStart`; advance-only) plus scratch space. */
export class FillState {
  bi = 0;
  bStart = 0;
  readonly valid = new Uint8Array(CHUNK_ROWS);
  readonly bits = new Uint8Array(CHUNK_ROWS / 8);
  readonly words = new Int32Array(2 * CHUNK_ROWS);
  readonly f64 = new Float64Array(CHUNK_ROWS);
  /** Columns of a reused chunk whose validity was written: later chunks must overwrite it, even when all valid. */
  readonly masked: boolean[] = [];
}

type Segments = (fn: (b: ColumnBatch, from: number, to: number, at: number) => void) => void;

/**
 * Writes global rows [g, g+n) into `chunk`: column 0 is `time`, then one column per plan, then (when
 * `ordinal`) the global row number as BIGINT. `st.masked` must be fresh for a fresh chunk.
 */
export function fillChunk(chunk: DuckDBDataChunk, batches: readonly ColumnBatch[], plans: readonly Plan[], st: FillState, g: number, n: number, ordinal = false): void {
  while (st.bStart + batches[st.bi]!.length <= g) st.bStart += batches[st.bi++]!.length;
  chunk.rowCount = n;
  const segments: Segments = (fn) => {
    for (let i = st.bi, s = st.bStart, at = 0; at < n; s += batches[i]!.length, i++) {
      const b = batches[i]!;
      const from = g + at - s;
      const to = Math.min(b.length, from + (n - at));
      if (to > from) fn(b, from, to, at);
      at += Math.max(0, to - from);
    }
  };
  const words = st.words;
  segments((b, from, to, at) => writeMicrosAsInt64(words, at, b.time, from, to));
  copyIntoVector(chunkVector(chunk, 0), 0, words.subarray(0, 2 * n));
  for (let k = 0; k < plans.length; k++) fillColumn(chunk, k + 1, plans[k]!, g, n, segments, st);
  if (ordinal) {
    // Row numbers stay far below 2^31, so each int64 is (row, 0) as two little-endian words.
    for (let i = 0; i < n; i++) (words[2 * i] = g + i), (words[2 * i + 1] = 0);
    copyIntoVector(chunkVector(chunk, plans.length + 1), 0, words.subarray(0, 2 * n));
  }
}

/** Writes rows [g, g+n) of one planned column into vector `k` of the chunk. */
function fillColumn(chunk: DuckDBDataChunk, k: number, p: Plan, g: number, n: number, segments: Segments, st: FillState): void {
  const vec = chunkVector(chunk, k);
  const valid = st.valid;
  if (p.encoded) {
    copyIntoVector(vec, 0, narrowIds(p.encoded).subarray(g, g + n));
    const ev = p.encoded.valid;
    const nulls = ev !== null && ev.subarray(g, g + n).includes(0);
    if (nulls) valid.set(ev.subarray(g, g + n));
    return writeValidity(vec, k, nulls, n, st);
  }
  let anyNull = false;
  if (p.type === 'string') {
    segments((b, from, to, at) => {
      const col = b.columns.get(p.name);
      for (let i = from; i < to; i++) {
        const v = stringAt(col, i);
        if (v === null) (valid[at + i - from] = 0), (anyNull = true);
        else (valid[at + i - from] = 1), setVectorString(vec, at + i - from, v);
      }
    });
    return writeValidity(vec, k, anyNull, n, st);
  }
  const width = p.type === 'bool' ? 1 : 8;
  segments((b, from, to, at) => {
    const col = b.columns.get(p.name);
    if (!col || col.type === 'string' || (p.type === 'bool') !== (col.type === 'bool')) {
      valid.fill(0, at, at + to - from);
      anyNull = true;
      return;
    }
    if (col.valid) {
      const src = col.valid.subarray(from, to);
      valid.set(src, at);
      anyNull ||= src.includes(0);
    } else valid.fill(1, at, at + to - from);
    if (p.type === 'float64' && col.type === 'int64') {
      // int64 meeting float64 widens: convert through scratch space.
      const f64 = st.f64;
      for (let i = from; i < to; i++) f64[i - from] = Number(col.values[i]);
      copyIntoVector(vec, at * 8, f64.subarray(0, to - from));
    } else if (p.type === 'int64' && col.type !== 'int64') {
      valid.fill(0, at, at + to - from);
      anyNull = true;
    } else copyIntoVector(vec, at * width, col.values.subarray(from, to));
  });
  writeValidity(vec, k, anyNull, n, st);
}

/** Writes `st.valid`'s first `n` flags as the vector's validity when any row is NULL or the chunk had a mask before. */
function writeValidity(vec: VectorHandle, k: number, anyNull: boolean, n: number, st: FillState): void {
  if (!anyNull && !st.masked[k]) return;
  const bits = st.bits;
  const bytes = Math.ceil(n / 64) * 8;
  if (!anyNull) bits.fill(0xff, 0, bytes);
  else {
    bits.fill(0, 0, bytes);
    const valid = st.valid;
    for (let r = 0; r < n; r++) if (valid[r] !== 0) bits[r >> 3]! |= 1 << (r & 7);
  }
  setVectorValidity(vec, bits.subarray(0, bytes));
  st.masked[k] = true;
}

const TWO_32 = 4294967296;

/** Writes float64 epoch microseconds as int64 words (TIMESTAMP µs) at row `at` of `out`, without a BigInt per value. */
function writeMicrosAsInt64(out: Int32Array, at: number, source: Float64Array, from: number, to: number): void {
  for (let i = from, o = at * 2; i < to; i++, o += 2) {
    const v = source[i]!;
    const hi = Math.floor(v / TWO_32);
    out[o] = (v - hi * TWO_32) | 0;
    out[o + 1] = hi | 0;
  }
}

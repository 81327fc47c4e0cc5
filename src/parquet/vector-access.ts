/**
 * Whole-array writes into DuckDB data-chunk vectors. @duckdb/node-api only offers per-value
 * `setItem`, which costs a call (and, for validity, BigInt math) per value; the single JS thread is
 * the write path's bottleneck, so this file copies typed arrays straight into the vectors' backing
 * arrays and sets validity bitmaps a word at a time. It relies on node-api internals (`items`,
 * `dataView`, `validity.data`): tests/parquet-writer.test.ts pins the behaviour on upgrades.
 */
import type { DuckDBDataChunk } from '../duckdb/index.ts';

interface RawVector {
  items?: ArrayBufferView;
  dataView?: DataView;
  validity: { data: BigUint64Array | null };
  setItem(index: number, value: unknown): void;
  flush(): void;
}

/** A chunk column opened for bulk writes; stays valid while the chunk is reused for the next rows. */
export interface OpenVector {
  /** The vector's item storage as bytes (8 bytes per DOUBLE/BIGINT/TIMESTAMP, 1 per BOOLEAN/ENUM8...). */
  bytes: Uint8Array;
  /** Per-value write, for VARCHAR. */
  setItem(index: number, value: string | null): void;
  /** Marks rows whose `valid[i]` is 0 as NULL (first `count` rows); null = every row valid. */
  setValidity(valid: Uint8Array | null, count: number): void;
  /** Hands the written values to DuckDB; call once per filled chunk. */
  flush(): void;
}

/** Opens column `index` of `chunk` for bulk writes. */
export function openVector(chunk: DuckDBDataChunk, index: number): OpenVector {
  const raw = chunk.getColumnVector(index) as unknown as RawVector;
  const view = raw.items ?? raw.dataView;
  const bytes = view ? new Uint8Array(view.buffer, view.byteOffset, view.byteLength) : new Uint8Array(0);
  let masked = false;
  return {
    bytes,
    setItem: (i, v) => raw.setItem(i, v),
    setValidity(valid, count) {
      // A reused chunk keeps its native mask: once rows were NULL, later all-valid rows must say so too.
      if (valid === null && !masked) return;
      const words = new BigUint64Array(Math.ceil(count / 64) || 1);
      const bits = new Uint8Array(words.buffer);
      if (valid === null) bits.fill(0xff);
      // Little-endian words: row r is bit (r & 7) of byte (r >> 3).
      else for (let r = 0; r < count; r++) if (valid[r] !== 0) bits[r >> 3]! |= 1 << (r & 7);
      raw.validity.data = words;
      masked = true;
    },
    flush: () => raw.flush(),
  };
}

const TWO_32 = 4294967296;

/** Writes float64 epoch microseconds as int64 (TIMESTAMP µs) without a BigInt per value. */
export function writeMicrosAsInt64(target: Uint8Array, targetRow: number, source: Float64Array, from: number, to: number): void {
  const out = new Int32Array(target.buffer, target.byteOffset, target.byteLength >> 2);
  for (let i = from, o = targetRow * 2; i < to; i++, o += 2) {
    const v = source[i]!;
    const hi = Math.floor(v / TWO_32);
    out[o] = (v - hi * TWO_32) | 0;
    out[o + 1] = hi | 0;
  }
}

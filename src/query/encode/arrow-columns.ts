/**
 * Arrow column buffers filled from DuckDB chunks by copying memory: fixed-width values and the
 * validity bitmap (DuckDB's and Arrow's share a bit order) are copied as bytes; strings are copied
 * as UTF-8 bytes with no JS string in between (both in native code when the chunk is read in place). Each `take` yields one column's IPC body for a record batch.
 */
import { Binary, Bool, DateDay, Float32, Float64, Int16, Int32, Int64, Int8, Null, TimestampMicrosecond, TimestampMillisecond, TimestampNanosecond, TimestampSecond, Uint16, Uint32, Uint64, Uint8, Utf8, type DataType } from 'apache-arrow';
import type { ColumnBody } from './arrow-ipc.ts';
import { STRING_SLACK, isValid, type ResultChunk } from '../../duckdb/index.ts';
import { vectorWidth, type ColumnKind } from './column-kind.ts';
import { decimalAt, unscaledAt } from './values.ts';
import { BufferPool } from './buffer-pool.ts';

const encoder = new TextEncoder();
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The Arrow type a column is sent as (same normalisation as the other formats). */
export function arrowType(kind: ColumnKind): DataType {
  switch (kind.k) {
    case 'number':
      return { int8: new Int8(), int16: new Int16(), int32: new Int32(), uint8: new Uint8(), uint16: new Uint16(), uint32: new Uint32(), float32: new Float32(), float64: new Float64() }[kind.wire];
    case 'int64':
      return new Int64();
    case 'uint64':
      return new Uint64();
    case 'bool':
      return new Bool();
    case 'timestamp': {
      const tz = kind.tz ? 'UTC' : null;
      return kind.unit === 's' ? new TimestampSecond(tz) : kind.unit === 'ms' ? new TimestampMillisecond(tz) : kind.unit === 'us' ? new TimestampMicrosecond(tz) : new TimestampNanosecond(tz);
    }
    case 'date':
      return new DateDay();
    case 'decimal':
      return kind.scale === 0 ? (kind.signed ? new Int64() : new Uint64()) : new Float64();
    case 'blob':
      return new Binary();
    case 'null':
      return new Null();
    case 'varchar':
    case 'text':
    case 'json':
      return new Utf8();
  }
}

/** Collects one column's values across chunks until `take`. */
export class ArrowColumn {
  readonly type: DataType;
  /** Per chunk: the chunk and column (read at `take`), or the texts node-api converted. */
  private pieces: { chunk: ResultChunk; ci: number; validity: Uint8Array | null; texts: (Uint8Array | null)[] | null; rows: number }[] = [];
  private rows = 0;

  /** `pool` lends the batch buffers (reused once sent; see buffer-pool.ts). */
  constructor(
    private readonly kind: ColumnKind,
    private readonly pool: BufferPool = new BufferPool(),
  ) {
    this.type = arrowType(kind);
  }

  /** Adds column `ci` of `chunk` (the chunk must stay unreleased until `take`). */
  add(chunk: ResultChunk, ci: number): void {
    const n = chunk.rowCount;
    if (this.kind.k === 'text') {
      const v = chunk.node.getColumnVector(ci);
      const texts: (Uint8Array | null)[] = new Array(n);
      for (let i = 0; i < n; i++) {
        const x = v.getItem(i);
        texts[i] = x === null ? null : encoder.encode(String(x));
      }
      this.pieces.push({ chunk, ci, validity: null, texts, rows: n });
    } else this.pieces.push({ chunk, ci, validity: this.kind.k === 'null' ? null : chunk.validity(ci), texts: null, rows: n });
    this.rows += n;
  }

  /** The IPC body of everything added since the last take, copied out of DuckDB's memory. */
  take(): ColumnBody {
    const pieces = this.pieces;
    const length = this.rows;
    this.pieces = [];
    this.rows = 0;
    if (this.kind.k === 'null') return { node: { length, nullCount: length }, buffers: [] };
    const { bitmap, nullCount } = this.validity(pieces, length);
    const node = { length, nullCount };
    const validity = bitmap ? [bitmap] : [];
    const k = this.kind;
    if (k.k === 'varchar' || k.k === 'blob' || k.k === 'text') {
      const { offsets, data } = this.strings(pieces, length);
      return { node, buffers: [validity, [bytesOf(offsets)], [data]] };
    }
    if (k.k === 'bool') {
      const bits = this.pool.get((length + 7) >> 3).fill(0);
      let at = 0;
      for (const p of pieces) {
        const { data: d, validity: v } = p.chunk.vector(p.ci, 1);
        for (let i = 0; i < p.rows; i++, at++) if (d[i] && isValid(v, i)) bits[at >> 3]! |= 1 << (at & 7);
      }
      return { node, buffers: [validity, [bits]] };
    }
    if (k.k === 'decimal') return { node, buffers: [validity, [bytesOf(this.decimals(pieces, length, k))]] };
    // Same layout in DuckDB and Arrow: the chunks' value bytes, back to back, are the data buffer.
    const width = vectorWidth(k);
    // Every byte is written below (values, or zeros under NULLs): no need to zero it first.
    const data = this.pool.get(length * width);
    let at = 0;
    for (const p of pieces) {
      p.chunk.copyValues(p.ci, width, data, at);
      // DuckDB leaves the value under a NULL as it was in memory: zero it rather than send it along.
      const v = p.validity;
      if (v) for (let i = 0; i < p.rows; i++) if (!isValid(v, i)) data.fill(0, at + i * width, at + (i + 1) * width);
      at += p.rows * width;
    }
    return { node, buffers: [validity, [data]] };
  }

  private validity(pieces: typeof this.pieces, length: number): { bitmap: Uint8Array | undefined; nullCount: number } {
    const hasNulls = pieces.some((p) => (p.texts ? p.texts.includes(null) : p.validity !== null));
    if (!hasNulls) return { bitmap: undefined, nullCount: 0 };
    const bitmap = this.pool.get((length + 7) >> 3).fill(0);
    let at = 0;
    for (const p of pieces) {
      const v = p.validity;
      if (p.texts) {
        for (let i = 0; i < p.rows; i++) if (p.texts[i] !== null) bitmap[(at + i) >> 3]! |= 1 << ((at + i) & 7);
      } else if (at % 8 === 0) {
        const bytes = (p.rows + 7) >> 3;
        if (v) bitmap.set(v.subarray(0, bytes), at >> 3);
        else bitmap.fill(255, at >> 3, (at >> 3) + bytes);
        // Clear bits past this piece: the next piece ORs its own bits in.
        if (p.rows % 8) bitmap[(at >> 3) + bytes - 1]! &= (1 << (p.rows % 8)) - 1;
      } else {
        for (let i = 0; i < p.rows; i++) if (v === null || (v[i >> 3]! & (1 << (i & 7))) !== 0) bitmap[(at + i) >> 3]! |= 1 << ((at + i) & 7);
      }
      at += p.rows;
    }
    // Bits past `length` in the last byte may hold DuckDB's leftovers: clear them before counting.
    if (length % 8) bitmap[bitmap.length - 1]! &= (1 << (length % 8)) - 1;
    let valid = 0;
    for (let i = 0; i < bitmap.length; i++) valid += POPCOUNT[bitmap[i]!]!;
    return { bitmap, nullCount: length - valid };
  }

  private strings(pieces: typeof this.pieces, length: number): { offsets: Int32Array; data: Uint8Array } {
    let total = 0;
    for (const p of pieces) total += p.texts ? p.texts.reduce((n, t) => n + (t?.length ?? 0), 0) : p.chunk.stringTotal(p.ci);
    // Utf8 offsets are 32-bit: a batch of BATCH_ROWS rows cannot carry more.
    if (total > 0x7fffffff) throw new Error('cannot encode more than 2 GiB of strings in one Arrow record batch: select fewer or shorter strings');
    const o = this.pool.get(4 * (length + 1));
    const offsets = new Int32Array(o.buffer, o.byteOffset, length + 1);
    offsets[0] = 0;
    // Bytes up to `total` are all written; the slack past it is never sent.
    const data = this.pool.get(total + STRING_SLACK);
    let end = 0;
    let r = 0;
    for (const p of pieces) {
      if (!p.texts) {
        end = p.chunk.copyStrings(p.ci, offsets, r, end, data);
        r += p.rows;
        continue;
      }
      for (const t of p.texts) {
        if (t) data.set(t, end);
        end += t?.length ?? 0;
        offsets[++r] = end;
      }
    }
    return { offsets, data: data.subarray(0, total) };
  }

  private decimals(pieces: typeof this.pieces, length: number, k: ColumnKind & { k: 'decimal' }): Float64Array | BigInt64Array | BigUint64Array {
    if (k.scale > 0) {
      const out = new Float64Array(length);
      let r = 0;
      for (const p of pieces) {
        const raw = p.chunk.vector(p.ci, vectorWidth(k));
        const v = raw.validity;
        for (let i = 0; i < p.rows; i++) out[r++] = isValid(v, i) ? decimalAt(raw, k, i) : 0;
      }
      return out;
    }
    const out = k.signed ? new BigInt64Array(length) : new BigUint64Array(length);
    let r = 0;
    for (const p of pieces) {
      const raw = p.chunk.vector(p.ci, vectorWidth(k));
      for (let i = 0; i < p.rows; i++) {
        const valid = raw.validity === null || (raw.validity[i >> 3]! & (1 << (i & 7))) !== 0;
        const v = valid ? unscaledAt(raw, k, i) : 0n;
        if (k.signed ? v < INT64_MIN || v > INT64_MAX : v > 2n * INT64_MAX + 1n) throw new Error(`cannot encode ${v} as int64 in Arrow: cast the column to DOUBLE or VARCHAR`);
        out[r++] = v;
      }
    }
    return out;
  }
}

const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

const POPCOUNT = new Uint8Array(256).map((_, i) => {
  let c = 0;
  for (let b = i; b; b >>= 1) c += b & 1;
  return c;
});

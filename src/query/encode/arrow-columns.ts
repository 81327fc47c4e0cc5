/**
 * Arrow column buffers filled from DuckDB chunks by copying memory: fixed-width values and the
 * validity bitmap (DuckDB's and Arrow's share a bit order) are copied as bytes; strings are copied
 * as UTF-8 bytes with no JS string in between. Each `take` yields one Arrow Data for a record batch.
 */
import { Binary, Bool, DateDay, Float32, Float64, Int16, Int32, Int64, Int8, Null, TimestampMicrosecond, TimestampMillisecond, TimestampNanosecond, TimestampSecond, Uint16, Uint32, Uint64, Uint8, Utf8, makeData, type Data, type DataType } from 'apache-arrow';
import { rawVector, stringBytes, stringLength, type DuckDBDataChunk, type RawVector } from '../../duckdb/index.ts';
import { vectorWidth, type ColumnKind } from './column-kind.ts';
import { decimalAt, unscaledAt } from './values.ts';

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
      return new Utf8();
  }
}

/** Collects one column's values across chunks until `take`. */
export class ArrowColumn {
  readonly type: DataType;
  private pieces: { raw: RawVector | null; texts: (Uint8Array | null)[] | null; rows: number }[] = [];
  private rows = 0;

  constructor(private readonly kind: ColumnKind) {
    this.type = arrowType(kind);
  }

  /** Adds column `ci` of `chunk` (the chunk must stay alive until `take`). */
  add(chunk: DuckDBDataChunk, ci: number): void {
    const n = chunk.rowCount;
    const width = vectorWidth(this.kind);
    if (this.kind.k === 'text') {
      const v = chunk.getColumnVector(ci);
      const texts: (Uint8Array | null)[] = new Array(n);
      for (let i = 0; i < n; i++) {
        const x = v.getItem(i);
        texts[i] = x === null ? null : encoder.encode(String(x));
      }
      this.pieces.push({ raw: null, texts, rows: n });
    } else this.pieces.push({ raw: width > 0 ? rawVector(chunk, ci, width) : null, texts: null, rows: n });
    this.rows += n;
  }

  /** Builds the Arrow Data of everything added since the last take. */
  take(): Data {
    const pieces = this.pieces;
    const length = this.rows;
    this.pieces = [];
    this.rows = 0;
    if (this.kind.k === 'null') return makeData({ type: new Null(), length });
    const { bitmap, nullCount } = this.validity(pieces, length);
    const type = this.type;
    const k = this.kind;
    if (k.k === 'varchar' || k.k === 'blob' || k.k === 'text') return this.strings(pieces, length, bitmap, nullCount);
    if (k.k === 'bool') {
      const bits = new Uint8Array((length + 7) >> 3);
      let at = 0;
      for (const p of pieces) {
        const d = p.raw!.data;
        for (let i = 0; i < p.rows; i++, at++) if (d[i]) bits[at >> 3]! |= 1 << (at & 7);
      }
      return makeData({ type: type as Bool, length, nullCount, nullBitmap: bitmap, data: bits });
    }
    if (k.k === 'decimal') return this.decimals(pieces, length, bitmap, nullCount, k);
    const width = vectorWidth(k);
    const bytes = new Uint8Array(length * width);
    let o = 0;
    for (const p of pieces) {
      bytes.set(p.raw!.data.subarray(0, p.rows * width), o);
      o += p.rows * width;
    }
    const data =
      width === 8 ? (k.k === 'uint64' ? new BigUint64Array(bytes.buffer) : k.k === 'number' ? new Float64Array(bytes.buffer) : new BigInt64Array(bytes.buffer))
      : width === 4 ? (k.k === 'number' && k.wire === 'float32' ? new Float32Array(bytes.buffer) : k.k === 'number' && k.wire === 'uint32' ? new Uint32Array(bytes.buffer) : new Int32Array(bytes.buffer))
      : width === 2 ? (k.k === 'number' && k.wire === 'uint16' ? new Uint16Array(bytes.buffer) : new Int16Array(bytes.buffer))
      : k.k === 'number' && k.wire === 'int8' ? new Int8Array(bytes.buffer) : bytes;
    return makeData({ type: type as Int32, length, nullCount, nullBitmap: bitmap, data: data as Int32Array });
  }

  private validity(pieces: typeof this.pieces, length: number): { bitmap: Uint8Array | undefined; nullCount: number } {
    const hasNulls = pieces.some((p) => (p.raw ? p.raw.validity !== null : p.texts!.includes(null)));
    if (!hasNulls) return { bitmap: undefined, nullCount: 0 };
    const bitmap = new Uint8Array((length + 7) >> 3);
    let at = 0;
    for (const p of pieces) {
      const v = p.raw?.validity ?? null;
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

  private strings(pieces: typeof this.pieces, length: number, bitmap: Uint8Array | undefined, nullCount: number): Data {
    const offsets = new Int32Array(length + 1);
    let total = 0;
    let r = 0;
    for (const p of pieces) {
      for (let i = 0; i < p.rows; i++) {
        const valid = p.texts ? p.texts[i] !== null : p.raw!.validity === null || (p.raw!.validity[i >> 3]! & (1 << (i & 7))) !== 0;
        if (valid) total += p.texts ? p.texts[i]!.length : stringLength(p.raw!.data, i);
        offsets[++r] = total;
      }
    }
    const data = new Uint8Array(total);
    r = 0;
    for (const p of pieces) {
      const raw = p.raw?.data;
      for (let i = 0; i < p.rows; i++, r++) {
        const start = offsets[r]!;
        const len = offsets[r + 1]! - start;
        if (len === 0) continue;
        if (p.texts) data.set(p.texts[i]!, start);
        else if (len <= 12) for (let b = 0, src = i * 16 + 4; b < len; b++) data[start + b] = raw![src + b]!;
        else data.set(stringBytes(raw!, i), start);
      }
    }
    return makeData({ type: this.type as Utf8, length, nullCount, nullBitmap: bitmap, valueOffsets: offsets, data });
  }

  private decimals(pieces: typeof this.pieces, length: number, bitmap: Uint8Array | undefined, nullCount: number, k: ColumnKind & { k: 'decimal' }): Data {
    if (k.scale > 0) {
      const out = new Float64Array(length);
      let r = 0;
      for (const p of pieces) for (let i = 0; i < p.rows; i++) out[r++] = decimalAt(p.raw!, k, i);
      return makeData({ type: new Float64(), length, nullCount, nullBitmap: bitmap, data: out });
    }
    const out = k.signed ? new BigInt64Array(length) : new BigUint64Array(length);
    let r = 0;
    for (const p of pieces)
      for (let i = 0; i < p.rows; i++) {
        const valid = p.raw!.validity === null || (p.raw!.validity[i >> 3]! & (1 << (i & 7))) !== 0;
        const v = valid ? unscaledAt(p.raw!, k, i) : 0n;
        if (k.signed ? v < INT64_MIN || v > INT64_MAX : v > 2n * INT64_MAX + 1n) throw new Error(`cannot encode ${v} as int64 in Arrow: cast the column to DOUBLE or VARCHAR`);
        out[r++] = v;
      }
    return makeData({ type: this.type as Int64, length, nullCount, nullBitmap: bitmap, data: out as BigInt64Array });
  }
}

const POPCOUNT = new Uint8Array(256).map((_, i) => {
  let c = 0;
  for (let b = i; b; b >>= 1) c += b & 1;
  return c;
});

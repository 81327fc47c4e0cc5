/**
 * Reading result vectors in DuckDB's own memory layout (see result-chunks.ts), for the result
 * encoders: fixed-width values as typed-array views and strings as UTF-8 bytes, with no per-value JS
 * objects. Result chunks from the C API are always flat vectors, so row i is at byte i * width.
 */
import { toArrayBuffer } from 'bun:ffi';

/** One column of one chunk. */
export interface RawVector {
  rows: number;
  /** rows * width bytes of values; for VARCHAR/BLOB, 16-byte string headers. */
  data: Uint8Array;
  /** Validity bitmap, LSB first per byte (the Arrow layout); null when every row is valid. */
  validity: Uint8Array | null;
}

/** Whether row `i` is valid under `validity` (null: all valid). */
export function isValid(validity: Uint8Array | null, i: number): boolean {
  return validity === null || (validity[i >> 3]! & (1 << (i & 7))) !== 0;
}

/** Byte length of string `i` of a VARCHAR/BLOB vector. */
export function stringLength(data: Uint8Array, i: number): number {
  const o = i * 16;
  return (data[o]! | (data[o + 1]! << 8) | (data[o + 2]! << 16) | (data[o + 3]! << 24)) >>> 0;
}

/** UTF-8 bytes of string `i` of a VARCHAR/BLOB vector (a view for short strings, a copy for long ones). */
export function stringBytes(data: Uint8Array, i: number): Uint8Array {
  const len = stringLength(data, i);
  if (len <= 12) return data.subarray(i * 16 + 4, i * 16 + 4 + len);
  const o = i * 16 + 8;
  const at = (data[o]! | (data[o + 1]! << 8) | (data[o + 2]! << 16)) + data[o + 3]! * 0x1000000 + (data[o + 4]! | (data[o + 5]! << 8) | (data[o + 6]! << 16)) * 0x100000000;
  // A copy: the view of DuckDB's memory never leaves this function.
  return new Uint8Array(toArrayBuffer(at as never, 0, len)).slice();
}

/**
 * The strings over 12 bytes of a VARCHAR/BLOB vector, copied out of DuckDB's memory at once:
 * string `i` is `bytes.subarray(offsets[i], offsets[i] + stringLength(data, i))` (offsets of short
 * strings are unused). One copy per vector instead of one native call and one allocation per string.
 */
export interface LongStrings {
  bytes: Uint8Array;
  offsets: Int32Array;
}

/**
 * Copies the long strings of `raw` (16-byte string headers) into one buffer; see LongStrings. A
 * vector's string heap is an arena that DuckDB fills in row order, so consecutive long strings
 * mostly lie back to back: each such run is copied in one piece. NULL rows are skipped: DuckDB
 * leaves their headers as the memory was (stale bytes of earlier vectors), so their length and
 * pointer are garbage, and following such a pointer crashed the process.
 */
export function longStrings(raw: RawVector): LongStrings {
  const rows = raw.rows;
  const d = raw.data;
  const w = d.byteOffset % 4 === 0 ? new Uint32Array(d.buffer, d.byteOffset, rows * 4) : new Uint32Array(d.slice(0, rows * 16).buffer);
  const v = raw.validity;
  const offsets = new Int32Array(rows);
  let total = 0;
  for (let i = 0; i < rows; i++) if (w[i * 4]! > 12 && isValid(v, i)) total += w[i * 4]!;
  const bytes = new Uint8Array(total);
  if (total === 0) return { bytes, offsets };
  let o = 0;
  let start = 0;
  let end = 0;
  const copyRun = () => {
    // A view of DuckDB's memory that never leaves this function.
    if (end > start) bytes.set(new Uint8Array(toArrayBuffer(start, 0, end - start)), o);
    o += end - start;
  };
  for (let i = 0; i < rows; i++) {
    const len = w[i * 4]!;
    if (len <= 12 || !isValid(v, i)) continue;
    const p = w[i * 4 + 2]! + w[i * 4 + 3]! * 4294967296;
    if (p !== end) {
      copyRun();
      start = end = p;
    }
    offsets[i] = o + (p - start);
    end = p + len;
  }
  copyRun();
  return { bytes, offsets };
}

/** Bytes of the valid strings of a VARCHAR/BLOB vector. */
export function stringTotal(raw: RawVector): number {
  let total = 0;
  for (let i = 0; i < raw.rows; i++) if (isValid(raw.validity, i)) total += stringLength(raw.data, i);
  return total;
}

/**
 * Appends the strings of a VARCHAR/BLOB vector in Arrow's layout: `offsets[at + 1 + i]` is the end
 * of row i counted from `base`, the bytes go to `data` from `base` (nulls are empty); returns the new end.
 */
export function copyStrings(raw: RawVector, offsets: Int32Array, at: number, base: number, data: Uint8Array): number {
  for (let i = 0; i < raw.rows; i++) {
    if (isValid(raw.validity, i)) {
      const len = stringLength(raw.data, i);
      if (len <= 12) data.set(raw.data.subarray(i * 16 + 4, i * 16 + 4 + len), base);
      else data.set(stringBytes(raw.data, i), base);
      base += len;
    }
    offsets[at + 1 + i] = base;
  }
  return base;
}

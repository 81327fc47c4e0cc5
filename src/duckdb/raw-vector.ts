/**
 * Read access to result chunks in DuckDB's own memory layout, for the result encoders: fixed-width
 * values as typed-array views and strings as UTF-8 bytes, with no per-value JS objects. Result
 * chunks from the C API are always flat vectors, so row i is at byte i * width.
 */
import bindings from '@duckdb/node-bindings';
import type { DuckDBDataChunk } from '@duckdb/node-api';

/** One column of one chunk. */
export interface RawVector {
  rows: number;
  /** rows * width bytes of values; for VARCHAR/BLOB, 16-byte string headers. */
  data: Uint8Array;
  /** Validity bitmap, LSB first per byte (the Arrow layout); null when every row is valid. */
  validity: Uint8Array | null;
}

/** Opens column `column` of `chunk`, whose values are `width` bytes each (16 for strings). */
export function rawVector(chunk: DuckDBDataChunk, column: number, width: number): RawVector {
  const rows = chunk.rowCount;
  const vector = bindings.data_chunk_get_vector(chunk.chunk, column);
  const data = rows === 0 ? new Uint8Array(0) : bindings.vector_get_data(vector, rows * width);
  const validity = rows === 0 ? null : (bindings.vector_get_validity(vector, Math.ceil(rows / 64) * 8) ?? null);
  return { rows, data, validity };
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
  return bindings.get_data_from_pointer(data.buffer as ArrayBuffer, data.byteOffset + i * 16 + 8, len);
}

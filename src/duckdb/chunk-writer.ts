/**
 * Write access to data chunks in DuckDB's own memory, the mirror of raw-vector.ts: typed arrays are
 * copied straight into a vector at a byte offset, and validity bitmaps a whole vector at a time.
 * node-api's DuckDBVector instead copies the vector into JS on open and back on flush, and rebuilds
 * the column's type (for an ENUM, every dictionary string) per chunk: too slow for the write path.
 */
import bindings from '@duckdb/node-bindings';
import type { DuckDBDataChunk } from '@duckdb/node-api';

/** Opaque handle of one column vector of a chunk. */
export type VectorHandle = ReturnType<typeof bindings.data_chunk_get_vector>;

/** The vector of column `column` of `chunk`; stays valid while the chunk lives. */
export function chunkVector(chunk: DuckDBDataChunk, column: number): VectorHandle {
  return bindings.data_chunk_get_vector(chunk.chunk, column);
}

/** Copies all of `src` into `vector` starting at byte `byteOffset` (the caller keeps it within the vector's rows). */
export function copyIntoVector(vector: VectorHandle, byteOffset: number, src: ArrayBufferView): void {
  if (src.byteLength === 0) return;
  bindings.copy_data_to_vector(vector, byteOffset, src.buffer as ArrayBuffer, src.byteOffset, src.byteLength);
}

/** Replaces the validity of the vector's first rows with `bits` (LSB first; length a multiple of 8 bytes). */
export function setVectorValidity(vector: VectorHandle, bits: Uint8Array): void {
  bindings.vector_ensure_validity_writable(vector);
  bindings.copy_data_to_vector_validity(vector, 0, bits.buffer as ArrayBuffer, bits.byteOffset, bits.byteLength);
}

/** Stores string `value` at `row` of a VARCHAR vector. */
export function setVectorString(vector: VectorHandle, row: number, value: string): void {
  bindings.vector_assign_string_element(vector, row, value);
}

/**
 * Column memory that parsers allocate as SharedArrayBuffers: a sealed buffer then reaches a flush
 * worker without being copied (postMessage shares it), while the main thread keeps reading the same
 * rows for queries until they are in Parquet. Measured on the ingest benchmark: copying every column
 * for the worker cost ~12% of the main thread.
 */
import { columnMemory } from './column-memory.ts';

type Shared = Float64Array | BigInt64Array | Uint8Array | Uint32Array;

/**
 * Small arrays are carved out of a larger shared slab: creating a SharedArrayBuffer costs about as
 * much as parsing a hundred lines (~15% of a 5,000-line line-protocol body went to the six per
 * body). A slab is freed once no array carved from it is referenced, i.e. when the batches holding
 * them have been flushed, so it pins at most the rows of one flush window. Slab memory is never
 * reused, so it is zeroed like a fresh buffer. A parse in an arena (column-memory.ts) carves from
 * reused blocks instead.
 */
const SLAB_BYTES = 4 << 20;
const MAX_CARVED_BYTES = 256 << 10;
let slab = new SharedArrayBuffer(0);
let slabUsed = 0;

/**
 * Shared memory for `n` elements of `bytesPer` bytes: [buffer, byte offset]. Zeroed, unless `written`
 * says the caller sets every element before anything reads one (then reused memory is not zeroed first).
 */
function sharedMemory(n: number, bytesPer: number, written: boolean): [SharedArrayBuffer, number] {
  const bytes = n * bytesPer;
  const pooled = columnMemory.carve(bytes, written);
  if (pooled !== null) return pooled;
  if (bytes > MAX_CARVED_BYTES) return [new SharedArrayBuffer(bytes), 0];
  const size = (bytes + 7) & ~7; // every array starts 8-byte aligned
  if (slabUsed + size > slab.byteLength) {
    slab = new SharedArrayBuffer(SLAB_BYTES);
    slabUsed = 0;
  }
  const at = slabUsed;
  slabUsed += size;
  return [slab, at];
}

/** `n` elements in shared memory: zeroed, or with `written`, as found (the caller sets every one before any is read). */
export const sharedFloat64 = (n: number, written = false) => new Float64Array(...sharedMemory(n, 8, written), n);
export const sharedBigInt64 = (n: number, written = false) => new BigInt64Array(...sharedMemory(n, 8, written), n);
export const sharedUint8 = (n: number, written = false) => new Uint8Array(...sharedMemory(n, 1, written), n);
export const sharedUint32 = (n: number, written = false) => new Uint32Array(...sharedMemory(n, 4, written), n);

/** Whether `a` lives in shared memory (then it crosses threads without a copy). */
export const isShared = (a: Shared) => a.buffer instanceof SharedArrayBuffer;

/**
 * The first `length` values of a parser's array in shared memory: a view when it already is shared
 * and little capacity would be held back, else a right-sized shared copy (growing happens in
 * ordinary memory, which is cheaper to allocate than shared memory, and a grown array may be half empty).
 */
export function trimShared<T extends Shared>(arr: T, length: number): T {
  // Exactly full: the array itself (a view costs an object and, on shared memory, shows in profiles).
  if (arr.length === length) return arr;
  if (length >= arr.length * 0.75 && isShared(arr)) return arr.subarray(0, length) as T;
  const Ctor = arr.constructor as new (buf: SharedArrayBuffer, offset: number, length: number) => T;
  const out = new Ctor(...sharedMemory(length, arr.BYTES_PER_ELEMENT, true), length);
  out.set(arr.subarray(0, length) as never);
  return out;
}

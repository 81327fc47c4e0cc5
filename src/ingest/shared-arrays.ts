/**
 * Column memory that parsers allocate as SharedArrayBuffers: a sealed buffer then reaches a flush
 * worker without being copied (postMessage shares it), while the main thread keeps reading the same
 * rows for queries until they are in Parquet. Measured on the ingest benchmark: copying every column
 * for the worker cost ~12% of the main thread.
 */
type Shared = Float64Array | BigInt64Array | Uint8Array | Uint32Array;

export const sharedFloat64 = (n: number) => new Float64Array(new SharedArrayBuffer(n * 8));
export const sharedBigInt64 = (n: number) => new BigInt64Array(new SharedArrayBuffer(n * 8));
export const sharedUint8 = (n: number) => new Uint8Array(new SharedArrayBuffer(n));
export const sharedUint32 = (n: number) => new Uint32Array(new SharedArrayBuffer(n * 4));

/** Whether `a` lives in shared memory (then it crosses threads without a copy). */
export const isShared = (a: Shared) => a.buffer instanceof SharedArrayBuffer;

/**
 * The first `length` values of a parser's array in shared memory: a view when it already is shared
 * and little capacity would be held back, else a right-sized shared copy (growing happens in
 * ordinary memory, which is cheaper to allocate than shared memory, and a grown array may be half empty).
 */
export function trimShared<T extends Shared>(arr: T, length: number): T {
  if (arr.length === length || (length >= arr.length * 0.75 && isShared(arr))) return arr.subarray(0, length) as T;
  const Ctor = arr.constructor as new (buf: SharedArrayBuffer) => T;
  const out = new Ctor(new SharedArrayBuffer(length * arr.BYTES_PER_ELEMENT));
  out.set(arr.subarray(0, length) as never);
  return out;
}

/**
 * Snappy block-format decompression, the framing remote-write uses. Hand-written rather than
 * snappyjs: its per-byte helper calls for every copy made it ~3x slower on remote-write bodies
 * (long runs of short back-references). Long literals go through the engine's memmove (`set`);
 * copies (at most 64 bytes) and short literals stay in a byte loop, cheaper than a call at that
 * size. Every length and offset is checked: a hostile body cannot read or write outside the
 * buffers, nor make us allocate more than the caller allows. When native code is on, the same
 * decoding in C (src/native/snappy.c, this file's `inflate` its twin) does the work: about twice as
 * fast on remote-write bodies (bench/prom-parse.bench.ts).
 */
import { invalid, tooLarge } from '../../lib/errors.ts';
import { nativeSnappy } from '../../native/index.ts';

/** Below this many bytes a plain loop beats a subarray + set call. */
const BULK = 24;

const corrupt = (why: string) => invalid(`cannot decode remote-write body: not snappy block-compressed data (${why})`);

/** Uncompresses a snappy block into a new array, refusing one that claims more than `maxBytes` uncompressed. */
export function uncompressSnappy(src: Uint8Array, maxBytes: number): Uint8Array {
  const { length, start } = preamble(src, maxBytes);
  const out = new Uint8Array(length);
  decode(src, start, out, length);
  return out;
}

/** Kept between calls of `uncompressSnappyScratch`, unless a body was unusually large. */
let scratch = new Uint8Array(1 << 20);
const KEEP_SCRATCH_BYTES = 64 << 20;

/**
 * Like `uncompressSnappy`, but into a buffer reused by the next call: for a caller that reads the
 * result at once and keeps nothing of it (no allocation and zeroing of a fresh body per request).
 */
export function uncompressSnappyScratch(src: Uint8Array, maxBytes: number): Uint8Array {
  const { length, start } = preamble(src, maxBytes);
  let out = scratch;
  if (out.length < length) {
    out = new Uint8Array(Math.max(length, out.length * 2));
    if (out.length <= KEEP_SCRATCH_BYTES) scratch = out;
  }
  decode(src, start, out, length);
  return out.subarray(0, length);
}

/** `inflate` by the C twin when it is loaded. */
function decode(src: Uint8Array, start: number, out: Uint8Array, length: number): void {
  const native = nativeSnappy();
  if (native === null) return inflate(src, start, out, length);
  const error = native(src, start, out, length);
  if (error !== null) throw corrupt(error);
}

/** The uncompressed length (a varint of at most 32 bits) and where the tagged elements start. */
function preamble(src: Uint8Array, maxBytes: number): { length: number; start: number } {
  let length = 0;
  let pos = 0;
  for (let shift = 0; ; shift += 7) {
    if (pos >= src.length || shift > 28) throw corrupt('bad length preamble');
    const c = src[pos++]!;
    length += (c & 0x7f) * 2 ** shift;
    if (c < 0x80) break;
  }
  if (length > maxBytes) throw tooLarge(`cannot accept remote-write body: it uncompresses to ${length} bytes, more than server.max_payload_size (${maxBytes})`);
  return { length, start: pos };
}

/** Decodes the elements of `src` from `pos` into `out[0, len)`; every byte of that range is written. */
export function inflate(src: Uint8Array, pos: number, out: Uint8Array, len: number): void {
  const n = src.length;
  let op = 0;
  while (pos < n) {
    const c = src[pos++]!;
    const kind = c & 3;
    if (kind === 0) {
      let l = (c >>> 2) + 1;
      if (l > 60) {
        // 1-4 little-endian bytes of length - 1 follow the tag.
        const extra = l - 60;
        if (pos + extra > n) throw corrupt('truncated literal length');
        l = 0;
        for (let i = extra - 1; i >= 0; i--) l = l * 256 + src[pos + i]!;
        l += 1;
        pos += extra;
      }
      if (pos + l > n) throw corrupt('literal runs past the input');
      if (op + l > len) throw corrupt('output longer than its preamble says');
      if (l < BULK) for (let i = 0; i < l; i++) out[op + i] = src[pos + i]!;
      else out.set(src.subarray(pos, pos + l), op);
      pos += l;
      op += l;
      continue;
    }
    let l: number;
    let offset: number;
    if (kind === 1) {
      if (pos >= n) throw corrupt('truncated copy');
      l = ((c >>> 2) & 7) + 4;
      offset = ((c >>> 5) << 8) | src[pos++]!;
    } else if (kind === 2) {
      if (pos + 2 > n) throw corrupt('truncated copy');
      l = (c >>> 2) + 1;
      offset = src[pos]! | (src[pos + 1]! << 8);
      pos += 2;
    } else {
      if (pos + 4 > n) throw corrupt('truncated copy');
      l = (c >>> 2) + 1;
      offset = (src[pos]! | (src[pos + 1]! << 8) | (src[pos + 2]! << 16) | (src[pos + 3]! << 24)) >>> 0;
      pos += 4;
    }
    if (offset === 0 || offset > op) throw corrupt('copy from before the start');
    if (op + l > len) throw corrupt('output longer than its preamble says');
    // A copy is at most 64 bytes, and may overlap its source (offset < length repeats a pattern), so
    // byte by byte: a call into copyWithin costs more than the loop at these lengths.
    let from = op - offset;
    const end = op + l;
    while (op < end) out[op++] = out[from++]!;
  }
  if (op !== len) throw corrupt('output shorter than its preamble says');
}

/**
 * Snappy compression (the raw format Parquet uses) for the direct writer. The same algorithm as the
 * reference compressor: 64 KB blocks, a hash table of 4-byte sequences, literals and copies, and
 * lookups that skip faster through data that does not match. Written here because the JavaScript port
 * that hyparquet-writer ships writes one byte at a time through a growable writer and extends matches
 * byte by byte, which made compressing tag columns ~20% of the ingest benchmark's CPU; this one writes
 * into one preallocated array and compares four bytes at a time. Output is checked against hyparquet's
 * decompressor and DuckDB's reader in tests.
 */

const BLOCK = 1 << 16;
const HASH_BITS = 14;
const INPUT_MARGIN = 15;
/** Literals up to this length are copied by a loop rather than by `set` over a view. */
const SHORT_LITERAL = 64;
const table = new Int32Array(1 << HASH_BITS);

const load32 = (a: Uint8Array, p: number) => a[p]! | (a[p + 1]! << 8) | (a[p + 2]! << 16) | (a[p + 3]! << 24);
const hash = (v: number) => Math.imul(v, 0x1e35a7bd) >>> (32 - HASH_BITS);

/** The largest output `compress` can produce for `n` input bytes. */
const maxLength = (n: number) => 32 + n + Math.floor(n / 6);

/** `input` as raw snappy (uncompressed length varint, then literals and copies). */
export function snappyCompress(input: Uint8Array): Uint8Array {
  return compressInto(input, new Uint8Array(maxLength(input.length)));
}

/** Larger outputs are allocated per call, so one huge column does not pin its size for good. */
const MAX_TRANSIENT = 32 << 20;
/** Output memory of `snappyCompressTransient`, reused by every call (compressing is synchronous). */
let transient = new Uint8Array(0);

/**
 * The same bytes as `snappyCompress`, in memory that the next call overwrites: for callers that copy
 * the result away at once (the direct writer), so a column chunk does not allocate its output afresh.
 */
export function snappyCompressTransient(input: Uint8Array): Uint8Array {
  const need = maxLength(input.length);
  if (need > MAX_TRANSIENT) return snappyCompress(input);
  if (transient.length < need) transient = new Uint8Array(Math.max(need, Math.floor(transient.length * 1.5)));
  return compressInto(input, transient);
}

function compressInto(input: Uint8Array, out: Uint8Array): Uint8Array {
  let op = 0;
  for (let v = input.length; ; v = Math.floor(v / 128)) {
    if (v < 128) {
      out[op++] = v;
      break;
    }
    out[op++] = (v % 128) | 0x80;
  }
  for (let start = 0; start < input.length; start += BLOCK) op = compressBlock(input, start, Math.min(input.length, start + BLOCK), out, op);
  return out.subarray(0, op);
}

function compressBlock(a: Uint8Array, start: number, end: number, out: Uint8Array, op: number): number {
  let nextEmit = start;
  if (end - start >= INPUT_MARGIN) {
    // Entries below `start` belong to earlier blocks: offsets must stay inside this one.
    table.fill(-1);
    const ipLimit = end - INPUT_MARGIN;
    let ip = start + 1;
    let nextHash = hash(load32(a, ip));
    outer: for (;;) {
      let skip = 32;
      let nextIp = ip;
      let candidate: number;
      do {
        ip = nextIp;
        const h = nextHash;
        nextIp = ip + (skip++ >> 5);
        if (nextIp > ipLimit) break outer;
        nextHash = hash(load32(a, nextIp));
        candidate = table[h]!;
        table[h] = ip;
      } while (candidate < start || load32(a, ip) !== load32(a, candidate));
      op = literal(a, nextEmit, ip, out, op);
      for (;;) {
        const base = ip;
        let matched = 4;
        while (ip + matched + 4 <= end && load32(a, candidate + matched) === load32(a, ip + matched)) matched += 4;
        while (ip + matched < end && a[candidate + matched] === a[ip + matched]) matched++;
        ip += matched;
        op = copy(base - candidate, matched, out, op);
        nextEmit = ip;
        if (ip >= ipLimit) break outer;
        table[hash(load32(a, ip - 1))] = ip - 1;
        const h = hash(load32(a, ip));
        candidate = table[h]!;
        table[h] = ip;
        if (candidate < start || load32(a, ip) !== load32(a, candidate)) break;
      }
      ip++;
      nextHash = hash(load32(a, ip));
    }
  }
  if (nextEmit < end) op = literal(a, nextEmit, end, out, op);
  return op;
}

function literal(a: Uint8Array, from: number, to: number, out: Uint8Array, op: number): number {
  const len = to - from;
  if (len === 0) return op;
  const n = len - 1;
  if (n < 60) out[op++] = n << 2;
  else {
    const bytes = n < 0x100 ? 1 : n < 0x10000 ? 2 : n < 0x1000000 ? 3 : 4;
    out[op++] = (59 + bytes) << 2;
    for (let i = 0; i < bytes; i++) out[op++] = (n >>> (8 * i)) & 0xff;
  }
  // Most literals between matches are a few bytes: a view plus `set` per literal cost more than the
  // copy itself (a third of a flush's CPU on float columns), so short ones are copied a byte at a time.
  if (len <= SHORT_LITERAL) for (let i = 0; i < len; i++) out[op + i] = a[from + i]!;
  else out.set(a.subarray(from, to), op);
  return op + len;
}

function copy(offset: number, len: number, out: Uint8Array, op: number): number {
  while (len >= 68) {
    op = copy2(offset, 64, out, op);
    len -= 64;
  }
  if (len > 64) {
    op = copy2(offset, 60, out, op);
    len -= 60;
  }
  if (len < 12 && offset < 2048) {
    out[op++] = 1 | ((len - 4) << 2) | ((offset >>> 8) << 5);
    out[op++] = offset & 0xff;
    return op;
  }
  return copy2(offset, len, out, op);
}

function copy2(offset: number, len: number, out: Uint8Array, op: number): number {
  out[op++] = 2 | ((len - 1) << 2);
  out[op++] = offset & 0xff;
  out[op++] = offset >>> 8;
  return op;
}

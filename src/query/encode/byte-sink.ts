/**
 * An append-only byte buffer for building large response bodies (JSON text, MessagePack) without
 * intermediate strings: numbers and timestamps are written digit by digit, short ASCII text char by
 * char. Full blocks are kept as they are and handed to the response as a list of parts.
 */
import type { BufferPool } from './buffer-pool.ts';

const BLOCK = 1 << 20;
/** Blocks start small and double: most results are a few rows, and a fresh 1 MiB block per sink cost ~0.2 ms. */
const FIRST_BLOCK = 4096;
const encoder = new TextEncoder();
/** "00".."99" as byte pairs. */
const PAIRS = new Uint8Array(200).map((_, i) => 48 + (i % 2 === 0 ? Math.floor(i / 2 / 10) : (i >> 1) % 10));

/** Growable output buffer of fixed-size blocks. */
export class ByteSink {
  private readonly blocks: Uint8Array[] = [];
  /** Current block; written up to `pos`. */
  buf: Uint8Array;
  pos = 0;
  private flushed = 0;

  /** With `pool`, blocks are full-size ones lent by it (warm memory, given back once sent; see buffer-pool.ts). */
  constructor(private readonly pool?: BufferPool) {
    this.buf = pool ? pool.get(BLOCK) : new Uint8Array(FIRST_BLOCK);
  }

  /** Ensures `n` free bytes in the current block. */
  reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    if (this.pos > 0) this.blocks.push(this.buf.subarray(0, this.pos));
    this.flushed += this.pos;
    this.buf = this.pool ? this.pool.get(Math.max(BLOCK, n)) : new Uint8Array(Math.max(Math.min(BLOCK, this.buf.length * 2), n));
    this.pos = 0;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.flushed + this.pos;
  }

  /** One byte. */
  byte(b: number): void {
    if (this.pos >= this.buf.length) this.reserve(1);
    this.buf[this.pos++] = b;
  }

  /** Raw bytes. */
  bytes(src: Uint8Array): void {
    const n = src.length;
    this.reserve(n);
    if (n < 32) {
      const buf = this.buf;
      let p = this.pos;
      for (let i = 0; i < n; i++) buf[p++] = src[i]!;
      this.pos = p;
    } else {
      this.buf.set(src, this.pos);
      this.pos += n;
    }
  }

  /** Text known to be ASCII (numbers, names we generated). */
  ascii(s: string): void {
    const n = s.length;
    this.reserve(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) buf[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** Any text, UTF-8 encoded. */
  utf8(s: string): void {
    this.bytes(encoder.encode(s));
  }

  /** A safe integer (|n| < 2^53) as decimal digits. */
  int(n: number): void {
    this.reserve(21);
    const buf = this.buf;
    if (n < 0) {
      buf[this.pos++] = 45;
      n = -n;
    }
    if (n < 10) {
      buf[this.pos++] = 48 + n;
      return;
    }
    let digits = 1;
    for (let t = n; t >= 10; t = Math.floor(t / 10)) digits++;
    let p = this.pos + digits;
    this.pos = p;
    while (n >= 10) {
      const q = Math.floor(n / 10);
      buf[--p] = 48 + (n - q * 10);
      n = q;
    }
    buf[--p] = 48 + n;
  }

  /** Zero-padded unsigned integer of exactly `width` digits. */
  padded(n: number, width: number): void {
    this.reserve(width);
    const buf = this.buf;
    let p = this.pos + width;
    this.pos = p;
    let i = 0;
    for (; i + 1 < width; i += 2) {
      const q = Math.floor(n / 100);
      const r = (n - q * 100) * 2;
      buf[--p] = PAIRS[r + 1]!;
      buf[--p] = PAIRS[r]!;
      n = q;
    }
    if (i < width) buf[--p] = 48 + (n % 10);
  }

  /**
   * A finite double as the shortest text that reads back as the same value, in the form DuckDB's
   * JSON writer uses (encode/json-render.ts), so a double reads the same whichever wrote it:
   * JavaScript's digits, with integral values as `1.0` (a typed client sees a float), exponents
   * without `+` (`1e21`) and `-0.0`.
   */
  float(x: number): void {
    const t = '' + x;
    const n = t.length;
    this.reserve(n + 3);
    const buf = this.buf;
    let p = this.pos;
    let plain = true;
    if (x === 0 && 1 / x < 0) buf[p++] = 45;
    for (let i = 0; i < n; i++) {
      const ch = t.charCodeAt(i);
      if (ch === 46 || ch === 101) plain = false;
      else if (ch === 43) continue;
      buf[p++] = ch;
    }
    if (plain) {
      buf[p++] = 46;
      buf[p++] = 48;
    }
    this.pos = p;
  }

  /** Bytes `start` to `end` of `src`, without a view of them. */
  range(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    this.reserve(n);
    if (n < 32) {
      const buf = this.buf;
      let p = this.pos;
      for (let i = start; i < end; i++) buf[p++] = src[i]!;
      this.pos = p;
    } else {
      this.buf.set(src.subarray(start, end), this.pos);
      this.pos += n;
    }
  }

  /** Everything written, as a list of parts (zero-copy). */
  parts(): Uint8Array[] {
    const out = this.blocks.slice();
    if (this.pos > 0) out.push(this.buf.subarray(0, this.pos));
    return out;
  }

  /** Everything written, as one contiguous array. */
  toBytes(): Uint8Array {
    const parts = this.parts();
    if (parts.length === 1) return parts[0]!;
    const out = new Uint8Array(this.length);
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
}

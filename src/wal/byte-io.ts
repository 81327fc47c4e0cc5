/**
 * Little-endian byte writer and reader for the WAL's binary formats. Typed arrays are copied as raw
 * bytes: every platform Bun targets is little-endian, which the module checks once at load.
 */

if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error('cannot use the WAL format: this platform is big-endian');

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 bytes of `s`. */
export const utf8 = (s: string): Uint8Array => encoder.encode(s);

/** Writes into a buffer of a size computed beforehand; overrunning it is a bug and throws. */
export class ByteWriter {
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  pos: number;

  constructor(size: number, start = 0) {
    // Not zero-filled: every byte from `start` is written (the encoders check the final position), and
    // zeroing a few hundred KiB per write cost more than encoding it. Its own buffer, never a pool's.
    this.bytes = new Uint8Array(Buffer.allocUnsafeSlow(size).buffer, 0, size);
    this.bytes.fill(0, 0, start);
    this.view = new DataView(this.bytes.buffer);
    this.pos = start;
  }
  u8(v: number): void {
    this.view.setUint8(this.pos, v);
    this.pos += 1;
  }
  u32(v: number): void {
    this.view.setUint32(this.pos, v, true);
    this.pos += 4;
  }
  f64(v: number): void {
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }
  /** Raw bytes of any typed array. */
  raw(a: ArrayBufferView): void {
    this.bytes.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), this.pos);
    this.pos += a.byteLength;
  }
  /** A length-prefixed (u32) UTF-8 string given as its encoded bytes. */
  str(encoded: Uint8Array): void {
    this.u32(encoded.length);
    this.bytes.set(encoded, this.pos);
    this.pos += encoded.length;
  }
}

/** Reads what ByteWriter wrote; every read is bounds-checked so a bad payload throws instead of misreading. */
export class ByteReader {
  private readonly view: DataView;
  pos = 0;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  get remaining(): number {
    return this.bytes.length - this.pos;
  }
  private need(n: number): void {
    if (n < 0 || this.pos + n > this.bytes.length) throw new Error(`payload ends early (need ${n} bytes at ${this.pos} of ${this.bytes.length})`);
  }
  u8(): number {
    this.need(1);
    return this.view.getUint8(this.pos++);
  }
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  f64(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }
  /** A copy of the next `n` bytes in a fresh, aligned ArrayBuffer (so typed views on it are valid). */
  copy(n: number): ArrayBuffer {
    this.need(n);
    const start = this.bytes.byteOffset + this.pos;
    this.pos += n;
    return this.bytes.buffer.slice(start, start + n) as ArrayBuffer;
  }
  /** A view of the next `n` bytes without copying (valid while the source buffer lives). */
  sub(n: number): Uint8Array {
    this.need(n);
    const v = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
  /** A length-prefixed (u32) UTF-8 string. */
  str(): string {
    const n = this.u32();
    return decoder.decode(this.sub(n));
  }
  /** Decodes UTF-8 bytes to a string. */
  static text(bytes: Uint8Array): string {
    return decoder.decode(bytes);
  }
}

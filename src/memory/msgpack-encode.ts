/**
 * A minimal MessagePack encoder for the columnar write payload `{m, columns}`. The memory service
 * ships alone (no shared codec), and it must control wire types: `importance` is always float64 so the
 * column's inferred type never flips between INT64 and DOUBLE, and `time` is always an integer.
 */

/** A column to encode: its name, wire kind and values. */
export type EncodedColumn =
  | { name: string; kind: 'string'; values: readonly string[] }
  | { name: string; kind: 'float'; values: readonly number[] }
  | { name: string; kind: 'int'; values: readonly number[] };

/** Encodes `{m, columns: {name: [values]}}` as MessagePack bytes. */
export function encodeColumnar(measurement: string, columns: readonly EncodedColumn[]): Uint8Array {
  const w = new Writer();
  w.mapHeader(2);
  w.str('m');
  w.str(measurement);
  w.str('columns');
  w.mapHeader(columns.length);
  for (const c of columns) {
    w.str(c.name);
    w.arrayHeader(c.values.length);
    if (c.kind === 'string') for (const v of c.values) w.str(v);
    else if (c.kind === 'float') for (const v of c.values) w.float64(v);
    else for (const v of c.values) w.int(v);
  }
  return w.bytes();
}

const encoder = new TextEncoder();

class Writer {
  private buf = new Uint8Array(4096);
  private view = new DataView(this.buf.buffer);
  private pos = 0;

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  mapHeader(n: number): void {
    if (n < 16) this.u8(0x80 | n);
    else if (n < 0x10000) (this.u8(0xde), this.u16(n));
    else (this.u8(0xdf), this.u32(n));
  }

  arrayHeader(n: number): void {
    if (n < 16) this.u8(0x90 | n);
    else if (n < 0x10000) (this.u8(0xdc), this.u16(n));
    else (this.u8(0xdd), this.u32(n));
  }

  str(s: string): void {
    // Worst case 3 bytes per UTF-16 unit; reserve, then encode in place.
    this.reserve(5 + s.length * 3);
    const start = this.pos + 5;
    const { written } = encoder.encodeInto(s, this.buf.subarray(start));
    let header: number[];
    if (written < 32) header = [0xa0 | written];
    else if (written < 0x100) header = [0xd9, written];
    else if (written < 0x10000) header = [0xda, written >> 8, written & 0xff];
    else header = [0xdb, (written >>> 24) & 0xff, (written >> 16) & 0xff, (written >> 8) & 0xff, written & 0xff];
    this.buf.copyWithin(this.pos + header.length, start, start + written);
    this.buf.set(header, this.pos);
    this.pos += header.length + written;
  }

  float64(v: number): void {
    this.reserve(9);
    this.buf[this.pos++] = 0xcb;
    this.view.setFloat64(this.pos, v);
    this.pos += 8;
  }

  int(v: number): void {
    if (!Number.isSafeInteger(v)) throw new Error(`cannot encode ${v} as a MessagePack integer`);
    this.reserve(9);
    this.buf[this.pos++] = v >= 0 ? 0xcf : 0xd3;
    this.view.setBigInt64(this.pos, BigInt(v));
    this.pos += 8;
  }

  private u8(v: number): void {
    this.reserve(1);
    this.buf[this.pos++] = v;
  }

  private u16(v: number): void {
    this.reserve(2);
    this.view.setUint16(this.pos, v);
    this.pos += 2;
  }

  private u32(v: number): void {
    this.reserve(4);
    this.view.setUint32(this.pos, v);
    this.pos += 4;
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
}

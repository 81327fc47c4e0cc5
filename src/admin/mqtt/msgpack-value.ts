/**
 * A small MessagePack decoder to plain values. MQTT payloads are small and row-shaped, so a generic
 * decoder is simpler than a column-streaming one; integers beyond 2^53 come back as BigInt so
 * nanosecond timestamps stay exact. Extension types are refused (no point shape uses them).
 */

/** A decoded MessagePack value. */
export type MsgpackValue = null | boolean | number | bigint | string | Uint8Array | MsgpackValue[] | { [key: string]: MsgpackValue };

const MAX_DEPTH = 64;
const decoder = new TextDecoder('utf-8', { fatal: true });

class Cursor {
  pos = 0;
  readonly view: DataView;
  constructor(readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  need(n: number): number {
    const at = this.pos;
    if (at + n > this.buf.length) throw new Error(`truncated MessagePack data at byte ${at}`);
    this.pos = at + n;
    return at;
  }
}

/** Decodes exactly one MessagePack value filling all of `bytes`; throws "... MessagePack ..." on malformed input. */
export function decodeMsgpack(bytes: Uint8Array): MsgpackValue {
  const c = new Cursor(bytes);
  const value = read(c, 0);
  if (c.pos !== bytes.length) throw new Error(`trailing bytes after the MessagePack value (byte ${c.pos} of ${bytes.length})`);
  return value;
}

function read(c: Cursor, depth: number): MsgpackValue {
  if (depth > MAX_DEPTH) throw new Error(`MessagePack nesting deeper than ${MAX_DEPTH}`);
  const b = c.buf[c.need(1)]!;
  if (b <= 0x7f) return b;
  if (b >= 0xe0) return b - 0x100;
  if (b >= 0x80 && b <= 0x8f) return readMap(c, b & 0x0f, depth);
  if (b >= 0x90 && b <= 0x9f) return readArray(c, b & 0x0f, depth);
  if (b >= 0xa0 && b <= 0xbf) return readStr(c, b & 0x1f);
  const v = c.view;
  switch (b) {
    case 0xc0: return null;
    case 0xc2: return false;
    case 0xc3: return true;
    case 0xc4: return readBin(c, v.getUint8(c.need(1)));
    case 0xc5: return readBin(c, v.getUint16(c.need(2)));
    case 0xc6: return readBin(c, v.getUint32(c.need(4)));
    case 0xca: return v.getFloat32(c.need(4));
    case 0xcb: return v.getFloat64(c.need(8));
    case 0xcc: return v.getUint8(c.need(1));
    case 0xcd: return v.getUint16(c.need(2));
    case 0xce: return v.getUint32(c.need(4));
    case 0xcf: return safe(v.getBigUint64(c.need(8)));
    case 0xd0: return v.getInt8(c.need(1));
    case 0xd1: return v.getInt16(c.need(2));
    case 0xd2: return v.getInt32(c.need(4));
    case 0xd3: return safe(v.getBigInt64(c.need(8)));
    case 0xd9: return readStr(c, v.getUint8(c.need(1)));
    case 0xda: return readStr(c, v.getUint16(c.need(2)));
    case 0xdb: return readStr(c, v.getUint32(c.need(4)));
    case 0xdc: return readArray(c, v.getUint16(c.need(2)), depth);
    case 0xdd: return readArray(c, v.getUint32(c.need(4)), depth);
    case 0xde: return readMap(c, v.getUint16(c.need(2)), depth);
    case 0xdf: return readMap(c, v.getUint32(c.need(4)), depth);
    default:
      throw new Error(`unsupported MessagePack type 0x${b.toString(16)} at byte ${c.pos - 1}`);
  }
}

function safe(n: bigint): number | bigint {
  return n >= -9007199254740991n && n <= 9007199254740991n ? Number(n) : n;
}

function readStr(c: Cursor, len: number): string {
  const at = c.need(len);
  try {
    return decoder.decode(c.buf.subarray(at, at + len));
  } catch {
    throw new Error(`invalid UTF-8 in a MessagePack string at byte ${at}`);
  }
}

function readBin(c: Cursor, len: number): Uint8Array {
  const at = c.need(len);
  return c.buf.subarray(at, at + len);
}

function readArray(c: Cursor, len: number, depth: number): MsgpackValue[] {
  // Every element takes at least one byte: a length beyond the rest of the data is a lie, not a huge array.
  if (len > c.buf.length - c.pos) throw new Error(`truncated MessagePack data: array of ${len} at byte ${c.pos}`);
  const out = new Array<MsgpackValue>(len);
  for (let i = 0; i < len; i++) out[i] = read(c, depth + 1);
  return out;
}

function readMap(c: Cursor, len: number, depth: number): { [key: string]: MsgpackValue } {
  if (len * 2 > c.buf.length - c.pos) throw new Error(`truncated MessagePack data: map of ${len} at byte ${c.pos}`);
  const out: { [key: string]: MsgpackValue } = {};
  for (let i = 0; i < len; i++) {
    const key = read(c, depth + 1);
    if (typeof key !== 'string' && typeof key !== 'number') throw new Error(`MessagePack map key must be a string, got ${typeof key}`);
    const value = read(c, depth + 1);
    // Own data property even for "__proto__": no prototype games from untrusted input.
    Object.defineProperty(out, String(key), { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

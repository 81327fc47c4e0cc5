/**
 * A bounds-checked MessagePack cursor. The write parser walks the payload with it instead of
 * decoding to JS objects, so number arrays go straight into typed arrays and the wire type of
 * each number (int or float encoding) stays known — a generic decoder turns both into `number`.
 */
import { invalid } from '../../lib/errors.ts';

/** Wire-type classes of one MessagePack value, as returned by `MsgpackReader.kindAt`. */
export const T_NIL = 0;
export const T_BOOL = 1;
export const T_INT = 2;
export const T_FLOAT = 3;
export const T_STRING = 4;
export const T_ARRAY = 5;
export const T_MAP = 6;
export const T_BIN = 7;
export const T_EXT = 8;
/** Names of the type classes, for error messages. */
export const TYPE_WORDS = ['null', 'boolean', 'integer', 'float', 'string', 'array', 'map', 'binary', 'extension'];

const CLASS = new Uint8Array(256);
CLASS.fill(T_INT, 0x00, 0x80);
CLASS.fill(T_MAP, 0x80, 0x90);
CLASS.fill(T_ARRAY, 0x90, 0xa0);
CLASS.fill(T_STRING, 0xa0, 0xc0);
CLASS[0xc0] = T_NIL;
CLASS[0xc1] = T_EXT; // never used by the format: reported as unsupported
CLASS[0xc2] = CLASS[0xc3] = T_BOOL;
CLASS.fill(T_BIN, 0xc4, 0xc7);
CLASS.fill(T_EXT, 0xc7, 0xca);
CLASS[0xca] = CLASS[0xcb] = T_FLOAT;
CLASS.fill(T_INT, 0xcc, 0xd4);
CLASS.fill(T_EXT, 0xd4, 0xd9);
CLASS.fill(T_STRING, 0xd9, 0xdc);
CLASS[0xdc] = CLASS[0xdd] = T_ARRAY;
CLASS[0xde] = CLASS[0xdf] = T_MAP;
CLASS.fill(T_INT, 0xe0, 0x100);

const TWO_32 = 4294967296;

/** Reads MessagePack values from `buf`, advancing `pos`; throws AppError invalid on malformed or truncated data. */
export class MsgpackReader {
  readonly buf: Buffer;
  readonly view: DataView;
  readonly end: number;
  pos = 0;
  /** High and low 32-bit words of the last 64-bit integer read by `readInt` when it was not a safe integer. */
  hi = 0;
  lo = 0;

  constructor(bytes: Uint8Array) {
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.end = bytes.byteLength;
  }

  /** Type class of the value at the cursor (T_* constant). */
  kindAt(): number {
    if (this.pos >= this.end) throw truncated();
    return CLASS[this.buf[this.pos]];
  }

  /** Number of entries of the map at the cursor, consuming its header. */
  readMapHeader(): number {
    const b = this.buf[this.pos];
    if (b >= 0x80 && b <= 0x8f) return this.header(1, b & 0x0f, 2);
    if (b === 0xde) return this.header(3, this.u16(this.pos + 1), 2);
    if (b === 0xdf) return this.header(5, this.u32(this.pos + 1), 2);
    throw invalid(`cannot decode MessagePack: expected a map, found ${TYPE_WORDS[this.kindAt()]}`);
  }

  /** Number of elements of the array at the cursor, consuming its header. */
  readArrayHeader(): number {
    const b = this.buf[this.pos];
    if (b >= 0x90 && b <= 0x9f) return this.header(1, b & 0x0f, 1);
    if (b === 0xdc) return this.header(3, this.u16(this.pos + 1), 1);
    if (b === 0xdd) return this.header(5, this.u32(this.pos + 1), 1);
    throw invalid(`cannot decode MessagePack: expected an array, found ${TYPE_WORDS[this.kindAt()]}`);
  }

  /** Byte length of the string at the cursor, consuming its header; the bytes follow at `pos`. */
  readStringHeader(): number {
    const b = this.buf[this.pos];
    let len: number;
    if (b >= 0xa0 && b <= 0xbf) len = this.header(1, b & 0x1f, 0);
    else if (b === 0xd9) len = this.header(2, this.u8(this.pos + 1), 0);
    else if (b === 0xda) len = this.header(3, this.u16(this.pos + 1), 0);
    else if (b === 0xdb) len = this.header(5, this.u32(this.pos + 1), 0);
    else throw invalid(`cannot decode MessagePack: expected a string, found ${TYPE_WORDS[this.kindAt()]}`);
    if (this.pos + len > this.end) throw truncated();
    return len;
  }

  /** The string at the cursor. */
  readString(): string {
    const len = this.readStringHeader();
    const start = this.pos;
    this.pos += len;
    return this.buf.toString('utf8', start, start + len);
  }

  /** The integer at the cursor as a number when it is a safe integer; otherwise NaN, with the words in `hi`/`lo`. */
  readInt(): number {
    const p = this.pos;
    const b = this.buf[p];
    if (b <= 0x7f) return this.take(1, b);
    if (b >= 0xe0) return this.take(1, b - 256);
    const view = this.view;
    switch (b) {
      case 0xcc: return this.take(2, this.need(p, 2) && this.buf[p + 1]);
      case 0xcd: return this.take(3, this.need(p, 3) && view.getUint16(p + 1));
      case 0xce: return this.take(5, this.need(p, 5) && view.getUint32(p + 1));
      case 0xd0: return this.take(2, this.need(p, 2) && view.getInt8(p + 1));
      case 0xd1: return this.take(3, this.need(p, 3) && view.getInt16(p + 1));
      case 0xd2: return this.take(5, this.need(p, 5) && view.getInt32(p + 1));
      case 0xcf:
      case 0xd3: {
        this.need(p, 9);
        const hi = b === 0xcf ? view.getUint32(p + 1) : view.getInt32(p + 1);
        const lo = view.getUint32(p + 5);
        this.pos = p + 9;
        const v = hi * TWO_32 + lo;
        if (Number.isSafeInteger(v)) return v;
        this.hi = hi;
        this.lo = lo;
        return Number.NaN;
      }
    }
    throw invalid(`cannot decode MessagePack: expected an integer, found ${TYPE_WORDS[this.kindAt()]}`);
  }

  /** The float (float32 or float64 encoding) at the cursor. */
  readFloat(): number {
    const p = this.pos;
    if (this.buf[p] === 0xcb) {
      this.need(p, 9);
      this.pos = p + 9;
      return this.view.getFloat64(p + 1);
    }
    if (this.buf[p] === 0xca) {
      this.need(p, 5);
      this.pos = p + 5;
      return this.view.getFloat32(p + 1);
    }
    throw invalid(`cannot decode MessagePack: expected a float, found ${TYPE_WORDS[this.kindAt()]}`);
  }

  /** Steps over one value of any type, nested ones included (iteratively: deep nesting cannot overflow the stack). */
  skip(): void {
    let pending = 1;
    while (pending > 0) {
      pending--;
      const kind = this.kindAt();
      const b = this.buf[this.pos];
      if (kind === T_ARRAY) pending += this.readArrayHeader();
      else if (kind === T_MAP) pending += 2 * this.readMapHeader();
      else if (kind === T_STRING) {
        const len = this.readStringHeader(); // read before `this.pos +=` evaluates the old position
        this.pos += len;
      }
      else if (kind === T_INT) this.readInt();
      else if (kind === T_FLOAT) this.readFloat();
      else if (kind === T_NIL || kind === T_BOOL) this.pos++;
      else this.pos = this.binOrExtEnd(b);
      if (this.pos > this.end) throw truncated();
    }
  }

  /** Position just past the bin or ext value at the cursor. */
  binOrExtEnd(b: number): number {
    const p = this.pos;
    if (b >= 0xd4 && b <= 0xd8) return p + 2 + (1 << (b - 0xd4));
    if (b === 0xc4 || b === 0xc7) return p + 2 + this.u8(p + 1) + (b === 0xc7 ? 1 : 0);
    if (b === 0xc5 || b === 0xc8) return p + 3 + this.u16(p + 1) + (b === 0xc8 ? 1 : 0);
    if (b === 0xc6 || b === 0xc9) return p + 5 + this.u32(p + 1) + (b === 0xc9 ? 1 : 0);
    throw invalid(`cannot decode MessagePack: unsupported type byte 0x${b.toString(16)}`);
  }

  /** Consumes a header of `size` bytes announcing `count` items of at least `minBytes` bytes each. */
  private header(size: number, count: number, minBytes: number): number {
    this.pos += size;
    // A forged count (4 billion elements in a 10-byte body) must not size an allocation.
    if (this.pos > this.end || count * minBytes > this.end - this.pos) throw truncated();
    return count;
  }

  /** Advances past a value of `size` bytes whose bounds were checked, returning its decoded `value`. */
  private take(size: number, value: number): number {
    this.pos += size;
    return value;
  }

  /** Throws unless `size` bytes are available at `p`; returns true so calls chain with `&&`. */
  private need(p: number, size: number): true {
    if (p + size > this.end) throw truncated();
    return true;
  }

  private u8(p: number): number {
    if (p + 1 > this.end) throw truncated();
    return this.buf[p];
  }

  private u16(p: number): number {
    if (p + 2 > this.end) throw truncated();
    return (this.buf[p] << 8) | this.buf[p + 1];
  }

  private u32(p: number): number {
    if (p + 4 > this.end) throw truncated();
    return this.view.getUint32(p);
  }
}

function truncated() {
  return invalid('cannot decode MessagePack: unexpected end of data (the body is truncated)');
}

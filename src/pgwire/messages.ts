/**
 * The Postgres frontend/backend protocol 3.0 framing: a growable writer of backend messages and a
 * reader that cuts the client's byte stream into messages (startup packets have no type byte).
 */

/** Protocol codes carried in the startup packet's version field. */
export const PROTOCOL_3 = 196608;
export const SSL_REQUEST = 80877103;
export const GSSENC_REQUEST = 80877104;
export const CANCEL_REQUEST = 80877102;

/** Largest message a client may send (a long query with parameters); larger closes the connection. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/**
 * Largest message before authentication (startup packet, SASL or password messages): a client that
 * has not logged in cannot make the server buffer 64 MB. Postgres' own startup packet limit is 10,000.
 */
export const PRE_AUTH_MAX_BYTES = 64 * 1024;

const utf8 = new TextEncoder();

/** Builds backend messages into one buffer, flushed to the socket in one write. */
export class MessageWriter {
  private buf = new Uint8Array(8192);
  private view = new DataView(this.buf.buffer);
  private len = 0;
  private start = -1;

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** Starts a message of type `type`; its length is filled in by `end`. */
  begin(type: string): this {
    this.room(5);
    this.buf[this.len] = type.charCodeAt(0);
    this.start = this.len + 1;
    this.len += 5;
    return this;
  }

  /** Closes the message begun last. */
  end(): this {
    this.view.setInt32(this.start, this.len - this.start);
    return this;
  }

  int8(v: number): this {
    this.room(1);
    this.buf[this.len++] = v;
    return this;
  }

  int16(v: number): this {
    this.room(2);
    this.view.setInt16(this.len, v);
    this.len += 2;
    return this;
  }

  int32(v: number): this {
    this.room(4);
    this.view.setInt32(this.len, v);
    this.len += 4;
    return this;
  }

  bytes(b: Uint8Array): this {
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
    return this;
  }

  /** A NUL-terminated string. */
  cstr(s: string): this {
    return this.bytes(utf8.encode(s)).int8(0);
  }

  /** A length-prefixed value (-1 for NULL), as in DataRow and Bind. */
  value(b: Uint8Array | null): this {
    if (b === null) return this.int32(-1);
    return this.int32(b.length).bytes(b);
  }

  get size(): number {
    return this.len;
  }

  /** The bytes written so far, and a fresh start. */
  take(): Uint8Array {
    const out = this.buf.slice(0, this.len);
    this.len = 0;
    return out;
  }
}

/** Reads fields of one message payload in order. */
export class MessageReader {
  private at = 0;
  private readonly view: DataView;
  constructor(private readonly b: Uint8Array) {
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  int16(): number {
    const v = this.view.getInt16(this.at);
    this.at += 2;
    return v;
  }
  int32(): number {
    const v = this.view.getInt32(this.at);
    this.at += 4;
    return v;
  }
  bytes(n: number): Uint8Array {
    if (this.at + n > this.b.length) throw new Error('message shorter than its fields');
    const v = this.b.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }
  cstr(): string {
    const end = this.b.indexOf(0, this.at);
    if (end < 0) throw new Error('string without terminator');
    const s = Buffer.from(this.b.buffer, this.b.byteOffset + this.at, end - this.at).toString('utf8');
    this.at = end + 1;
    return s;
  }
  get remaining(): number {
    return this.b.length - this.at;
  }
}

/** One client message: `type` is '' for startup-phase packets. */
export interface FrontendMessage {
  type: string;
  body: Uint8Array;
}

/** Cuts the byte stream into messages; `startup` is true until the startup packet has been read. */
export class FrameReader {
  private pending: Uint8Array = new Uint8Array(0);
  startup = true;
  /** The largest frame accepted now: raised to MAX_MESSAGE_BYTES once the session has logged in. */
  limit = PRE_AUTH_MAX_BYTES;

  /** Appends `data` and returns every complete message; throws on a frame larger than `limit`. */
  push(data: Uint8Array): FrontendMessage[] {
    this.pending = this.pending.length === 0 ? data.slice() : Buffer.concat([this.pending, data]);
    const out: FrontendMessage[] = [];
    let at = 0;
    for (;;) {
      const head = this.startup ? 4 : 5;
      if (this.pending.length - at < head) break;
      const view = new DataView(this.pending.buffer, this.pending.byteOffset + at);
      const len = view.getInt32(this.startup ? 0 : 1);
      if (len < 4 || len > this.limit) throw new Error(`invalid message length ${len} (at most ${this.limit} bytes${this.limit === PRE_AUTH_MAX_BYTES ? ' before login' : ''})`);
      const total = len + (this.startup ? 0 : 1);
      if (this.pending.length - at < total) break;
      const type = this.startup ? '' : String.fromCharCode(this.pending[at]!);
      out.push({ type, body: this.pending.subarray(at + head, at + total) });
      at += total;
      // Only the packet that is the startup message proper ends the startup phase; SSLRequest does not.
      if (this.startup && len >= 8 && view.getInt32(4) === PROTOCOL_3) this.startup = false;
    }
    this.pending = this.pending.subarray(at);
    return out;
  }
}

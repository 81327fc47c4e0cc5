/**
 * MessagePack query results (spec, "Query result (MessagePack)"): one map with columnar `data`,
 * written by hand from DuckDB's memory, one byte sink per column. Values: floats as float64/float32,
 * integers exact (int64/uint64 encodings when needed), strings as their UTF-8 bytes, timestamps as
 * integers in the unit their wire type names (`timestamp[us]`: epoch microseconds), date32 as days,
 * decimals and HUGEINT as int64 (scale 0) or float64, nested and exotic types as DuckDB's text.
 */
import { stringBytes, stringLength, type RawVector, type ResultChunk } from '../../duckdb/index.ts';
import { ByteSink } from './byte-sink.ts';
import { vectorWidth, wireTypeName } from './column-kind.ts';
import type { ResultColumn } from './result.ts';
import type { QueryProfile } from '../execution.ts';
import type { Emit } from '../result-stream.ts';
import { decimalAt, numberView, unscaledAt, words } from './values.ts';

const TWO_32 = 4294967296;
const encoder = new TextEncoder();
// Scratch space for big-endian float bytes (this file assumes a little-endian host, as DuckDB's vectors do).
const F64 = new Float64Array(1);
const F64_BYTES = new Uint8Array(F64.buffer);
const F32 = new Float32Array(1);
const F32_BYTES = new Uint8Array(F32.buffer);

/** Writes MessagePack scalars into a sink. */
export const mp = {
  nil: (s: ByteSink) => s.byte(0xc0),
  bool: (s: ByteSink, v: boolean) => s.byte(v ? 0xc3 : 0xc2),
  /** A safe integer in its shortest encoding. */
  int(s: ByteSink, n: number): void {
    s.reserve(9);
    const b = s.buf;
    if (n >= 0 && n < 128) b[s.pos++] = n;
    else if (n < 0 && n >= -32) b[s.pos++] = n & 0xff;
    else if (n >= 0 && n <= 0xffffffff) {
      if (n < 256) (b[s.pos++] = 0xcc), (b[s.pos++] = n);
      else if (n < 65536) (b[s.pos++] = 0xcd), (b[s.pos++] = n >>> 8), (b[s.pos++] = n & 0xff);
      else (b[s.pos++] = 0xce), put32(b, s.pos, n), (s.pos += 4);
    } else if (n < 0 && n >= -2147483648) (b[s.pos++] = 0xd2), put32(b, s.pos, n >>> 0), (s.pos += 4);
    else {
      const hi = Math.floor(n / TWO_32);
      b[s.pos++] = n < 0 ? 0xd3 : 0xcf;
      put32(b, s.pos, hi >>> 0);
      put32(b, s.pos + 4, (n - hi * TWO_32) >>> 0);
      s.pos += 8;
    }
  },
  /** A 64-bit integer given as its two 32-bit halves (exact at any magnitude). */
  int64(s: ByteSink, lo: number, hi: number, signed: boolean): void {
    if ((signed && (hi === 0 || hi === -1)) || (!signed && hi === 0)) {
      const n = hi * TWO_32 + (lo >>> 0);
      if (Number.isSafeInteger(n)) return mp.int(s, n);
    }
    s.reserve(9);
    s.buf[s.pos++] = signed ? 0xd3 : 0xcf;
    put32(s.buf, s.pos, hi >>> 0);
    put32(s.buf, s.pos + 4, lo >>> 0);
    s.pos += 8;
  },
  float64(s: ByteSink, x: number): void {
    s.reserve(9);
    const b = s.buf;
    let p = s.pos;
    b[p++] = 0xcb;
    F64[0] = x;
    for (let k = 7; k >= 0; k--) b[p++] = F64_BYTES[k]!;
    s.pos = p;
  },
  float32(s: ByteSink, x: number): void {
    s.reserve(5);
    const b = s.buf;
    let p = s.pos;
    b[p++] = 0xca;
    F32[0] = x;
    for (let k = 3; k >= 0; k--) b[p++] = F32_BYTES[k]!;
    s.pos = p;
  },
  /** A string or binary header (`bin` true: bin8/16/32) followed by its bytes. */
  bytes(s: ByteSink, bytes: Uint8Array, bin = false): void {
    header(s, bytes.length, bin ? [0xc4, 0xc5, 0xc6] : [0xd9, 0xda, 0xdb], bin ? -1 : 0xa0);
    s.bytes(bytes);
  },
  str: (s: ByteSink, text: string) => mp.bytes(s, encoder.encode(text)),
  array: (s: ByteSink, n: number) => header(s, n, [-1, 0xdc, 0xdd], 0x90, 16),
  map: (s: ByteSink, n: number) => header(s, n, [-1, 0xde, 0xdf], 0x80, 16),
};

function put32(b: Uint8Array, at: number, v: number): void {
  b[at] = v >>> 24;
  b[at + 1] = (v >>> 16) & 0xff;
  b[at + 2] = (v >>> 8) & 0xff;
  b[at + 3] = v & 0xff;
}

/** Length header: fix form below `fixLimit` (when `fix` >= 0), else 8/16/32-bit forms. */
function header(s: ByteSink, n: number, codes: number[], fix: number, fixLimit = 32): void {
  s.reserve(5);
  const b = s.buf;
  if (fix >= 0 && n < fixLimit) b[s.pos++] = fix | n;
  else if (n < 256 && codes[0]! >= 0) (b[s.pos++] = codes[0]!), (b[s.pos++] = n);
  else if (n < 65536) (b[s.pos++] = codes[1]!), (b[s.pos++] = n >>> 8), (b[s.pos++] = n & 0xff);
  else (b[s.pos++] = codes[2]!), put32(b, s.pos, n), (s.pos += 4);
}

/**
 * Accumulates chunks column by column as they arrive (columnar `data` cannot be sent before the row
 * count is known); `end` writes the whole map through `emit` at once (without `emit`, `finish` returns it).
 */
export class MsgpackEncoder {
  private readonly sinks: ByteSink[];
  private readonly emit: Emit;
  private readonly collected: Uint8Array[] = [];
  private rows = 0;

  /** `withProfile`: add the query's `profile` (x-svc-profile) with the row count. */
  constructor(
    private readonly columns: readonly ResultColumn[],
    emit?: Emit,
    private readonly withProfile = false,
  ) {
    this.emit = emit ?? ((parts) => void this.collected.push(...parts));
    this.sinks = columns.map(() => new ByteSink());
  }

  /** Number of rows added so far. */
  get rowCount(): number {
    return this.rows;
  }

  /** Appends every row of `chunk`. */
  add(chunk: ResultChunk): void {
    const n = chunk.rowCount;
    this.columns.forEach((c, ci) => writeColumn(this.sinks[ci]!, c, chunk, ci, n));
    this.rows += n;
    chunk.release();
  }

  /** The whole map as parts (when built without `emit`). */
  finish(meta: { executionTimeMs: number; profile?: QueryProfile }): Uint8Array[] {
    this.end(meta);
    return this.collected;
  }

  /** Writes the whole map. */
  end(meta: { executionTimeMs: number; profile?: QueryProfile; rowsCapped?: boolean }): void {
    const profile = this.withProfile && meta.profile ? { ...meta.profile, rows: this.rows } : undefined;
    const head = new ByteSink();
    mp.map(head, 7 + (profile ? 1 : 0) + (meta.rowsCapped ? 1 : 0));
    mp.str(head, 'success');
    mp.bool(head, true);
    mp.str(head, 'columns');
    mp.array(head, this.columns.length);
    for (const c of this.columns) mp.str(head, c.name);
    mp.str(head, 'types');
    mp.array(head, this.columns.length);
    for (const c of this.columns) mp.str(head, wireTypeName(c.kind));
    mp.str(head, 'data');
    mp.array(head, this.columns.length);
    const parts = head.parts();
    for (const sink of this.sinks) {
      const h = new ByteSink();
      mp.array(h, this.rows);
      parts.push(...h.parts(), ...sink.parts());
    }
    const tail = new ByteSink();
    mp.str(tail, 'row_count');
    mp.int(tail, this.rows);
    mp.str(tail, 'execution_time_ms');
    mp.float64(tail, meta.executionTimeMs);
    mp.str(tail, 'timestamp');
    mp.str(tail, new Date().toISOString());
    if (meta.rowsCapped) {
      mp.str(tail, 'rows_capped');
      mp.bool(tail, true);
    }
    if (profile) {
      mp.str(tail, 'profile');
      mp.map(tail, Object.keys(profile).length);
      for (const [k, v] of Object.entries(profile)) {
        mp.str(tail, k);
        if (typeof v === 'number') mp.float64(tail, v);
        else mp.str(tail, String(v));
      }
    }
    parts.push(...tail.parts());
    this.emit(parts);
  }
}

/** A string of at most 12 bytes, stored inside its 16-byte header: fixstr header and bytes, no view made. */
function inlineString(s: ByteSink, data: Uint8Array, i: number): void {
  const o = i * 16;
  const len = data[o]!;
  s.reserve(13);
  const b = s.buf;
  let p = s.pos;
  b[p++] = 0xa0 | len;
  for (let k = 0; k < len; k++) b[p++] = data[o + 4 + k]!;
  s.pos = p;
}

function writeColumn(s: ByteSink, col: ResultColumn, chunk: ResultChunk, ci: number, n: number): void {
  const kind = col.kind;
  const width = vectorWidth(kind);
  const raw: RawVector | null = width > 0 ? chunk.vector(ci, width) : null;
  const v = raw?.validity ?? null;
  const valid = (i: number) => v === null || (v[i >> 3]! & (1 << (i & 7))) !== 0;
  switch (kind.k) {
    case 'number': {
      const view = numberView(raw!, kind.wire);
      const put = kind.wire === 'float64' ? mp.float64 : kind.wire === 'float32' ? mp.float32 : mp.int;
      for (let i = 0; i < n; i++) valid(i) ? put(s, view[i]!) : mp.nil(s);
      return;
    }
    case 'int64':
    case 'uint64':
    case 'timestamp': {
      const w = words(raw!);
      const signed = kind.k !== 'uint64';
      for (let i = 0; i < n; i++) valid(i) ? mp.int64(s, w[2 * i]!, w[2 * i + 1]!, signed) : mp.nil(s);
      return;
    }
    case 'bool':
      for (let i = 0; i < n; i++) valid(i) ? mp.bool(s, raw!.data[i] !== 0) : mp.nil(s);
      return;
    case 'date': {
      const w = words(raw!);
      for (let i = 0; i < n; i++) valid(i) ? mp.int(s, w[i]!) : mp.nil(s);
      return;
    }
    case 'decimal':
      for (let i = 0; i < n; i++) {
        if (!valid(i)) mp.nil(s);
        else if (kind.scale > 0) mp.float64(s, decimalAt(raw!, kind, i));
        else {
          const big = unscaledAt(raw!, kind, i);
          const fits = kind.signed ? BigInt.asIntN(64, big) === big : BigInt.asUintN(64, big) === big;
          // Beyond 64 bits the value still arrives as a number (float64), never as wrong digits.
          if (fits) mp.int64(s, Number(BigInt.asUintN(32, big)), Number(BigInt.asIntN(32, big >> 32n)), kind.signed);
          else mp.float64(s, Number(big));
        }
      }
      return;
    case 'varchar':
    case 'json':
    case 'blob':
      for (let i = 0; i < n; i++) {
        if (!valid(i)) mp.nil(s);
        else if (kind.k !== 'blob' && stringLength(raw!.data, i) <= 12) inlineString(s, raw!.data, i);
        else mp.bytes(s, stringBytes(raw!.data, i), kind.k === 'blob');
      }
      return;
    case 'null':
      for (let i = 0; i < n; i++) mp.nil(s);
      return;
    case 'text': {
      const vec = chunk.node.getColumnVector(ci);
      for (let i = 0; i < n; i++) {
        const x = vec.getItem(i);
        x === null ? mp.nil(s) : mp.str(s, String(x));
      }
    }
  }
}

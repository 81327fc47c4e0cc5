/**
 * MessagePack time values -> epoch microseconds. Integer epochs carry no unit, so the unit is
 * inferred from the magnitude of the first value (s < 1e10 <= ms < 1e13 <= µs < 1e16 <= ns);
 * the MessagePack timestamp extension (what msgpackr writes for a Date) is read as is.
 */
import { invalid } from '../../lib/errors.ts';
import { MsgpackReader, T_EXT, T_FLOAT, T_INT, T_NIL, TYPE_WORDS } from './msgpack-reader.ts';

/** Unit codes, inferred by `unitOf`; NO_UNIT means not inferred yet. */
export const NO_UNIT = -1;
const UNIT_S = 0;
const UNIT_MS = 1;
const UNIT_US = 2;
const UNIT_NS = 3;
const MICROS_PER = [1_000_000, 1000, 1];
const TWO_32 = 4294967296;

/** Unit code of an epoch value by its magnitude. */
export function unitOf(v: number): number {
  const a = Math.abs(v);
  return a < 1e10 ? UNIT_S : a < 1e13 ? UNIT_MS : a < 1e16 ? UNIT_US : UNIT_NS;
}

/** Reads and converts one time value at the cursor; the unit is inferred from it when `unit` is NO_UNIT. */
export class TimeReader {
  unit = NO_UNIT;

  constructor(private readonly column: string) {}

  /** The value at the cursor in epoch µs (row `row` names it in errors). */
  read(r: MsgpackReader, row: number): number {
    const kind = r.kindAt();
    let micros: number;
    if (kind === T_INT) {
      const v = r.readInt();
      if (this.unit === NO_UNIT) this.unit = unitOf(Number.isNaN(v) ? r.hi * TWO_32 : v);
      if (Number.isNaN(v)) micros = this.unit === UNIT_NS ? nsWordsToMicros(r.hi, r.lo) : Number.POSITIVE_INFINITY;
      else micros = this.unit === UNIT_NS ? floorDiv1000(v) : v * MICROS_PER[this.unit];
    } else if (kind === T_FLOAT) {
      const v = r.readFloat();
      if (this.unit === NO_UNIT) this.unit = unitOf(v);
      micros = this.unit === UNIT_NS ? Math.floor(v / 1000) : Math.round(v * MICROS_PER[this.unit]);
    } else if (kind === T_EXT) {
      micros = extTimestampMicros(r, this.column, row);
    } else {
      const what = kind === T_NIL ? 'null' : `a ${TYPE_WORDS[kind]}`;
      throw invalid(`cannot decode column '${this.column}': row ${row} is ${what}, expected an integer epoch time`);
    }
    // Beyond 2^53 µs (year 2255) a double cannot hold every microsecond: refuse instead of rounding.
    if (!(Math.abs(micros) <= Number.MAX_SAFE_INTEGER)) {
      throw invalid(`cannot decode column '${this.column}': row ${row} is out of range for a timestamp`);
    }
    return micros;
  }
}

/** floor(v / 1000) for a safe integer, exactly (a float division can round up across an integer). */
function floorDiv1000(v: number): number {
  const r = v % 1000;
  const q = (v - r) / 1000;
  return r < 0 ? q - 1 : q;
}

/** floor(ns / 1000) for an int64 given as 32-bit words, exactly: hi * 2^32 = hi * 4294967 * 1000 + hi * 296. */
function nsWordsToMicros(hi: number, lo: number): number {
  return hi * 4294967 + floorDiv1000(hi * 296 + lo);
}

/** Epoch µs of a MessagePack timestamp extension (type -1, 4, 8 or 12 bytes) at the cursor. */
function extTimestampMicros(r: MsgpackReader, column: string, row: number): number {
  const p = r.pos;
  const b = r.buf[p];
  const end = r.binOrExtEnd(b);
  if (end > r.end) throw invalid('cannot decode MessagePack: unexpected end of data (the body is truncated)');
  const view = r.view;
  let micros: number | null = null;
  if (b === 0xd6 && view.getInt8(p + 1) === -1) {
    micros = view.getUint32(p + 2) * 1_000_000;
  } else if (b === 0xd7 && view.getInt8(p + 1) === -1) {
    const hi = view.getUint32(p + 2);
    const seconds = (hi & 3) * TWO_32 + view.getUint32(p + 6);
    micros = seconds * 1_000_000 + Math.floor((hi >>> 2) / 1000);
  } else if (b === 0xc7 && r.buf[p + 1] === 12 && view.getInt8(p + 2) === -1) {
    const nanos = view.getUint32(p + 3);
    const seconds = view.getInt32(p + 7) * TWO_32 + view.getUint32(p + 11);
    micros = seconds * 1_000_000 + Math.floor(nanos / 1000);
  }
  if (micros === null) throw invalid(`cannot decode column '${column}': row ${row} is an extension type that is not a timestamp`);
  r.pos = end;
  return micros;
}

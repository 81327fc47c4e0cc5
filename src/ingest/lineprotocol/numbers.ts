/**
 * Number scanning straight from bytes: field values (float, `i` integers, `u` unsigned) and
 * timestamps. Results go into a reused `ScannedNumber` so the hot path allocates nothing.
 */
import { KIND_FLOAT, KIND_INT } from '../column-builder.ts';

const MINUS = 45;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
const LOWER_E = 101;
const UPPER_E = 69;
const LOWER_I = 105;
const LOWER_U = 117;
const PLUS = 43;

/** Powers of ten that are exact doubles: dividing an exact mantissa by one rounds correctly. */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);
const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

/** Timestamp precisions, as the index used by `scanTimestamp`. */
export const PRECISIONS = ['ns', 'us', 'ms', 's'] as const;
/** Line-protocol timestamp precision. */
export type Precision = (typeof PRECISIONS)[number];
const MICROS_PER_UNIT = [0, 1, 1000, 1_000_000];

/** Output of a scan: `value` (or `big` when `isBig`), the column kind, or the reason for failing. */
export class ScannedNumber {
  value = 0;
  big = 0n;
  isBig = false;
  kind = KIND_FLOAT;
  error = '';
}

/**
 * Scans a numeric field value at `pos`: `[-]digits[.digits][e[+-]digits]`, or integer forms
 * `[-]digits i` and `digits u`. Returns the position after it, or -1 with `out.error` set.
 * The caller checks that a delimiter follows.
 */
export function scanFieldNumber(buf: Buffer, pos: number, out: ScannedNumber): number {
  const start = pos;
  let b = buf[pos];
  const negative = b === MINUS;
  if (negative) b = buf[++pos];
  let mantissa = 0;
  const intStart = pos;
  while (b >= ZERO && b <= NINE) {
    mantissa = mantissa * 10 + (b - ZERO);
    b = buf[++pos];
  }
  const intDigits = pos - intStart;
  if (b === LOWER_I || b === LOWER_U) return scanInteger(buf, start, pos, negative, intDigits, mantissa, out);
  let fracDigits = 0;
  if (b === DOT) {
    b = buf[++pos];
    const fracStart = pos;
    while (b >= ZERO && b <= NINE) {
      mantissa = mantissa * 10 + (b - ZERO);
      b = buf[++pos];
    }
    fracDigits = pos - fracStart;
  }
  if (intDigits + fracDigits === 0) return fail(out, 'invalid number');
  out.kind = KIND_FLOAT;
  out.isBig = false;
  if (b === LOWER_E || b === UPPER_E) {
    b = buf[++pos];
    if (b === PLUS || b === MINUS) b = buf[++pos];
    const expStart = pos;
    while (b >= ZERO && b <= NINE) b = buf[++pos];
    if (pos === expStart) return fail(out, 'invalid number: exponent without digits');
    return slowFloat(buf, start, pos, out);
  }
  // Clinger's fast path: an exact mantissa divided by an exact power of ten is correctly rounded.
  if (mantissa > Number.MAX_SAFE_INTEGER || fracDigits >= POW10.length) return slowFloat(buf, start, pos, out);
  const v = fracDigits === 0 ? mantissa : mantissa / POW10[fracDigits];
  out.value = negative ? -v : v;
  return pos;
}

function scanInteger(
  buf: Buffer,
  start: number,
  end: number,
  negative: boolean,
  digits: number,
  value: number,
  out: ScannedNumber,
): number {
  const unsigned = buf[end] === LOWER_U;
  if (digits === 0) return fail(out, 'invalid integer');
  if (unsigned && negative) return fail(out, 'invalid unsigned integer: it is negative');
  out.kind = KIND_INT;
  if (value <= Number.MAX_SAFE_INTEGER) {
    out.isBig = false;
    out.value = negative ? -value : value;
    return end + 1;
  }
  const big = BigInt(buf.toString('latin1', start, end));
  if (big > INT64_MAX) {
    return fail(out, unsigned ? 'unsigned integer out of range: above the int64 maximum 9223372036854775807' : 'integer out of range for int64');
  }
  if (big < INT64_MIN) return fail(out, 'integer out of range for int64');
  out.isBig = true;
  out.big = big;
  return end + 1;
}

function slowFloat(buf: Buffer, start: number, end: number, out: ScannedNumber): number {
  const v = Number(buf.toString('latin1', start, end));
  if (!Number.isFinite(v)) return fail(out, 'float out of range');
  out.value = v;
  return end;
}

/**
 * Scans an integer timestamp at `pos` in precision `PRECISIONS[precision]` and stores it as epoch µs
 * in `out.value`. Nanoseconds are divided digit-wise (the last three digits are the remainder), so
 * 19-digit values never pass through an inexact double; negative values are floored like integer
 * division towards minus infinity. Returns the position after the digits, or -1 with `out.error`.
 */
export function scanTimestamp(buf: Buffer, pos: number, precision: number, out: ScannedNumber): number {
  let b = buf[pos];
  const negative = b === MINUS;
  if (negative) b = buf[++pos];
  const start = pos;
  while (b >= ZERO && b <= NINE) b = buf[++pos];
  const digits = pos - start;
  if (digits === 0) return fail(out, 'invalid timestamp');
  if (digits > 19) return fail(out, 'timestamp out of range');
  let micros: number;
  if (precision === 0) {
    const split = Math.max(start, pos - 3);
    let q = 0;
    for (let i = start; i < split; i++) q = q * 10 + (buf[i] - ZERO);
    let r = 0;
    for (let i = split; i < pos; i++) r = r * 10 + (buf[i] - ZERO);
    micros = negative ? -(q + (r > 0 ? 1 : 0)) : q;
  } else {
    let v = 0;
    for (let i = start; i < pos; i++) v = v * 10 + (buf[i] - ZERO);
    micros = (negative ? -v : v) * MICROS_PER_UNIT[precision];
  }
  // Beyond 2^53 µs (year 2255) a double cannot hold every microsecond: refuse instead of rounding.
  if (!(Math.abs(micros) <= Number.MAX_SAFE_INTEGER)) return fail(out, 'timestamp out of range (beyond year 2255)');
  out.value = micros;
  return pos;
}

function fail(out: ScannedNumber, message: string): number {
  out.error = message;
  return -1;
}

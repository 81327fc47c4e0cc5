/**
 * Value readers over raw DuckDB vectors shared by the encoders: 64-bit integers read as two 32-bit
 * halves (no BigInt per value when the value fits a double exactly) and decimals as numbers.
 */
import type { RawVector } from '../../duckdb/index.ts';
import type { ColumnKind } from './column-kind.ts';

const TWO_32 = 4294967296;
const TWO_53 = 9007199254740992;

/** A view of `raw.data` as 32-bit words (copied once when DuckDB's buffer is not 4-byte aligned). */
export function words(raw: RawVector): Int32Array {
  const d = raw.data;
  if (d.byteOffset % 4 === 0) return new Int32Array(d.buffer, d.byteOffset, d.byteLength >> 2);
  return new Int32Array(d.slice().buffer);
}

/** A typed view of fixed-width `raw.data` for the numeric kinds (copied when misaligned). */
export function numberView(raw: RawVector, wire: string): ArrayLike<number> {
  const d = raw.data;
  const aligned = (w: number) => (d.byteOffset % w === 0 ? d : d.slice());
  switch (wire) {
    case 'int8':
      return new Int8Array(d.buffer, d.byteOffset, d.byteLength);
    case 'uint8':
      return d;
    case 'int16': {
      const a = aligned(2);
      return new Int16Array(a.buffer, a.byteOffset, a.byteLength >> 1);
    }
    case 'uint16': {
      const a = aligned(2);
      return new Uint16Array(a.buffer, a.byteOffset, a.byteLength >> 1);
    }
    case 'int32': {
      const a = aligned(4);
      return new Int32Array(a.buffer, a.byteOffset, a.byteLength >> 2);
    }
    case 'uint32': {
      const a = aligned(4);
      return new Uint32Array(a.buffer, a.byteOffset, a.byteLength >> 2);
    }
    case 'float32': {
      const a = aligned(4);
      return new Float32Array(a.buffer, a.byteOffset, a.byteLength >> 2);
    }
    default: {
      const a = aligned(8);
      return new Float64Array(a.buffer, a.byteOffset, a.byteLength >> 3);
    }
  }
}

/** Signed 64-bit value `i` of `w` as a number (rounded beyond 2^53). */
export function int64At(w: Int32Array, i: number): number {
  return w[2 * i + 1]! * TWO_32 + (w[2 * i]! >>> 0);
}

/** Unsigned 64-bit value `i` of `w` as a number (rounded beyond 2^53). */
export function uint64At(w: Int32Array, i: number): number {
  return (w[2 * i + 1]! >>> 0) * TWO_32 + (w[2 * i]! >>> 0);
}

/** Exact decimal text of 64-bit value `i` (signed or not), for JSON numbers beyond 2^53. */
export function int64Text(w: Int32Array, i: number, signed: boolean): string {
  const n = signed ? int64At(w, i) : uint64At(w, i);
  if (Math.abs(n) < TWO_53) return String(n);
  const big = (BigInt(w[2 * i + 1]! >>> 0) << 32n) | BigInt(w[2 * i]! >>> 0);
  return (signed ? BigInt.asIntN(64, big) : big).toString();
}

/** Value `i` of a DECIMAL/HUGEINT vector as an exact BigInt of its unscaled digits. */
export function unscaledAt(raw: RawVector, kind: ColumnKind & { k: 'decimal' }, i: number): bigint {
  const d = raw.data;
  const dv = new DataView(d.buffer, d.byteOffset, d.byteLength);
  switch (kind.width) {
    case 2:
      return BigInt(dv.getInt16(i * 2, true));
    case 4:
      return BigInt(dv.getInt32(i * 4, true));
    case 8:
      return dv.getBigInt64(i * 8, true);
    case 16: {
      const lo = dv.getBigUint64(i * 16, true);
      const hi = kind.signed ? dv.getBigInt64(i * 16 + 8, true) : dv.getBigUint64(i * 16 + 8, true);
      return (hi << 64n) | lo;
    }
  }
}

/** Value `i` of a DECIMAL/HUGEINT vector as a number: an integer when the scale is 0, else scaled. */
export function decimalAt(raw: RawVector, kind: ColumnKind & { k: 'decimal' }, i: number): number {
  const d = raw.data;
  let n: number;
  if (kind.width === 2) n = new DataView(d.buffer, d.byteOffset).getInt16(i * 2, true);
  else if (kind.width === 4) n = new DataView(d.buffer, d.byteOffset).getInt32(i * 4, true);
  else n = Number(unscaledAt(raw, kind, i));
  return kind.scale === 0 ? n : n / 10 ** kind.scale;
}

/** Exact JSON number text of a DECIMAL/HUGEINT value (digits beyond 2^53 kept for scale 0). */
export function decimalText(raw: RawVector, kind: ColumnKind & { k: 'decimal' }, i: number): string {
  if (kind.scale === 0 && kind.width >= 8) return unscaledAt(raw, kind, i).toString();
  return jsonNumber(decimalAt(raw, kind, i));
}

/** A number as JSON text: NaN and infinities become null. */
export function jsonNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

/** DuckDB's DATE infinities (days). */
const DATE_INFINITY = 2147483647;

/**
 * DATE value (days since epoch) as `YYYY-MM-DD`; years outside 0000-9999 in ISO 8601's expanded
 * form (`+012000-02-29`, `-000044-03-15`, as JavaScript's Date writes them), the infinities as
 * DuckDB names them (`infinity`, `-infinity`).
 */
export function dateText(days: number): string {
  if (days === DATE_INFINITY) return 'infinity';
  if (days === -DATE_INFINITY) return '-infinity';
  return civilDate(days);
}

/** `n` (0-99) as two digits. */
export const twoDigits = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/** Proleptic Gregorian date of `days` since 1970-01-01 (any range; see dateText for the year form). */
export function civilDate(days: number): string {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const year = y >= 0 && y <= 9999 ? String(y).padStart(4, '0') : `${y < 0 ? '-' : '+'}${String(Math.abs(y)).padStart(6, '0')}`;
  return `${year}-${twoDigits(m)}-${twoDigits(d)}`;
}

/**
 * svc's result types as Postgres types: the OID a column is described with, and each value in the
 * text or the binary format. Times are sent as timestamptz in UTC (svc stores UTC instants).
 */
import type { ResultColumn } from '../query/index.ts';

/** Postgres type OIDs used here. */
export const OID = {
  bool: 16,
  bytea: 17,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  float4: 700,
  float8: 701,
  unknown: 705,
  varchar: 1043,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700,
} as const;

/** Byte size reported in RowDescription (-1: variable). */
const SIZES: Record<number, number> = { 16: 1, 20: 8, 21: 2, 23: 4, 700: 4, 701: 8, 1082: 4, 1114: 8, 1184: 8 };
export const typeSize = (oid: number) => SIZES[oid] ?? -1;

/** The OID a result column is described with. */
export function oidOf(col: ResultColumn): number {
  const k = col.kind;
  switch (k.k) {
    case 'bool':
      return OID.bool;
    case 'number':
      if (k.wire === 'float32') return OID.float4;
      if (k.wire === 'float64') return OID.float8;
      if (k.wire === 'int8' || k.wire === 'int16' || k.wire === 'uint8') return OID.int2;
      if (k.wire === 'uint32') return OID.int8;
      return OID.int4;
    case 'int64':
      return OID.int8;
    case 'uint64':
    case 'decimal':
      return OID.numeric;
    case 'timestamp':
      return OID.timestamptz;
    case 'date':
      return OID.date;
    case 'blob':
      return OID.bytea;
    default:
      return OID.text;
  }
}

/** 2000-01-01, the Postgres epoch, in Unix microseconds and days. */
const PG_EPOCH_MICROS = 946_684_800_000_000n;
const PG_EPOCH_DAYS = 10_957;
const utf8 = new TextEncoder();

/** A timestamp value of any unit as Unix microseconds (null for values that are not timestamps). */
function microsOf(v: unknown): bigint | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as { micros?: bigint; millis?: bigint; seconds?: bigint; nanos?: bigint };
  if (typeof o.micros === 'bigint') return o.micros;
  if (typeof o.millis === 'bigint') return o.millis * 1000n;
  if (typeof o.seconds === 'bigint') return o.seconds * 1_000_000n;
  if (typeof o.nanos === 'bigint') return o.nanos / 1000n;
  return null;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `YYYY-MM-DD HH:MM:SS[.ffffff]+00`, Postgres' text form of a timestamptz in UTC. */
export function timestamptzText(micros: bigint): string {
  // Floor division: instants before 1970 keep a positive fraction of their second.
  const secs = micros >= 0n ? micros / 1_000_000n : -((-micros + 999_999n) / 1_000_000n);
  const frac = Number(micros - secs * 1_000_000n);
  const d = new Date(Number(secs) * 1000);
  const base = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return `${base}${frac ? `.${String(frac).padStart(6, '0').replace(/0+$/, '')}` : ''}+00`;
}

function dateText(days: number): string {
  const d = new Date(days * 86_400_000);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** A value in the text format. */
export function textValue(oid: number, v: unknown): Uint8Array {
  switch (oid) {
    case OID.bool:
      return utf8.encode(v ? 't' : 'f');
    case OID.timestamptz: {
      const m = microsOf(v);
      return utf8.encode(m === null ? String(v) : timestamptzText(m));
    }
    case OID.date: {
      const days = (v as { days?: number }).days;
      return utf8.encode(typeof days === 'number' ? dateText(days) : String(v));
    }
    case OID.bytea: {
      const b = (v as { bytes?: Uint8Array }).bytes;
      return utf8.encode(b ? `\\x${Buffer.from(b).toString('hex')}` : String(v));
    }
    default:
      return utf8.encode(typeof v === 'string' ? v : String(v));
  }
}

/** A value in the binary format; null when svc cannot send `oid` in binary (then it is refused). */
export function binaryValue(oid: number, v: unknown): Uint8Array | null {
  const fixed = (n: number, write: (view: DataView) => void) => {
    const out = new Uint8Array(n);
    write(new DataView(out.buffer));
    return out;
  };
  switch (oid) {
    case OID.bool:
      return Uint8Array.of(v ? 1 : 0);
    case OID.int2:
      return fixed(2, (d) => d.setInt16(0, Number(v)));
    case OID.int4:
      return fixed(4, (d) => d.setInt32(0, Number(v)));
    case OID.int8:
      return fixed(8, (d) => d.setBigInt64(0, BigInt(v as number | bigint)));
    case OID.float4:
      return fixed(4, (d) => d.setFloat32(0, Number(v)));
    case OID.float8:
      return fixed(8, (d) => d.setFloat64(0, Number(v)));
    case OID.timestamptz:
    case OID.timestamp: {
      const m = microsOf(v);
      return m === null ? null : fixed(8, (d) => d.setBigInt64(0, m - PG_EPOCH_MICROS));
    }
    case OID.date:
      return fixed(4, (d) => d.setInt32(0, ((v as { days: number }).days ?? 0) - PG_EPOCH_DAYS));
    case OID.numeric:
      return numericBinary(String(v));
    case OID.bytea:
      return (v as { bytes?: Uint8Array }).bytes ?? null;
    case OID.text:
    case OID.varchar:
    case OID.unknown:
      return textValue(oid, v);
    default:
      return null;
  }
}

/** A decimal string in Postgres' binary numeric form: base-10000 digits, weight, sign, scale. */
export function numericBinary(text: string): Uint8Array {
  if (text === 'NaN') return Uint8Array.of(0, 0, 0, 0, 0xc0, 0, 0, 0);
  const neg = text.startsWith('-');
  const [intPart = '0', frac = ''] = text.replace(/^[-+]/, '').split('.');
  const intDigits = intPart.replace(/^0+/, '');
  const groupsInt = intDigits.length === 0 ? [] : chunk(intDigits.padStart(Math.ceil(intDigits.length / 4) * 4, '0'));
  const groupsFrac = frac.length === 0 ? [] : chunk(frac.padEnd(Math.ceil(frac.length / 4) * 4, '0'));
  let digits = [...groupsInt, ...groupsFrac];
  let weight = groupsInt.length - 1;
  while (digits.length > 0 && digits[0] === 0) (digits.shift(), weight--);
  while (digits.length > 0 && digits[digits.length - 1] === 0) digits.pop();
  if (digits.length === 0) weight = 0;
  const out = new Uint8Array(8 + digits.length * 2);
  const view = new DataView(out.buffer);
  view.setInt16(0, digits.length);
  view.setInt16(2, weight);
  view.setUint16(4, neg && digits.length > 0 ? 0x4000 : 0);
  view.setInt16(6, frac.length);
  digits.forEach((d, i) => view.setInt16(8 + i * 2, d));
  return out;
}

function chunk(s: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.length; i += 4) out.push(Number(s.slice(i, i + 4)));
  return out;
}

/** A Bind parameter sent in binary, as the text a SQL literal of its type would hold. */
export function binaryParamText(oid: number, b: Uint8Array): string {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  switch (oid) {
    case OID.bool:
      return b[0] ? 'true' : 'false';
    case OID.int2:
      return String(view.getInt16(0));
    case OID.int4:
      return String(view.getInt32(0));
    case OID.int8:
      return String(view.getBigInt64(0));
    case OID.float4:
      return String(view.getFloat32(0));
    case OID.float8:
      return String(view.getFloat64(0));
    case OID.timestamp:
    case OID.timestamptz:
      return timestamptzText(view.getBigInt64(0) + PG_EPOCH_MICROS).replace(/\+00$/, '+00:00');
    case OID.date:
      return dateText(view.getInt32(0) + PG_EPOCH_DAYS);
    case OID.text:
    case OID.varchar:
    case OID.unknown:
    case 0:
      return Buffer.from(b).toString('utf8');
    default:
      throw new Error(`binary parameters of type ${oid} are not supported: send them in text format`);
  }
}

/** The DuckDB type a parameter of `oid` is cast to; null leaves it an untyped literal (Postgres' unknown). */
export function duckTypeOfParam(oid: number): string | null {
  switch (oid) {
    case OID.bool:
      return 'BOOLEAN';
    case OID.int2:
    case OID.int4:
    case OID.int8:
      return 'BIGINT';
    case OID.float4:
    case OID.float8:
      return 'DOUBLE';
    case OID.numeric:
      return 'DOUBLE';
    case OID.timestamp:
    case OID.timestamptz:
      return 'TIMESTAMPTZ';
    case OID.date:
      return 'DATE';
    default:
      return null;
  }
}

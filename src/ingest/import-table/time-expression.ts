/**
 * The SQL expression that turns a source's time column into `time TIMESTAMP` (UTC, microseconds).
 * Values that cannot be converted, or fall outside the range every part of the service represents
 * exactly, become NULL; the stager then reports the first such row with its original text.
 */
import { invalid } from '../../lib/errors.ts';

/** Units of numeric time values (`time_format`); omitted means auto-detect. */
export const TIME_FORMATS = ['epoch_s', 'epoch_ms', 'epoch_us', 'epoch_ns'] as const;
export type TimeFormat = (typeof TIME_FORMATS)[number];

/**
 * Times are kept as float64 epoch microseconds in memory (see ColumnBatch), exact up to 2^53 µs:
 * years 1685 to 2255. Outside that range a value is refused rather than silently rounded.
 */
export const MAX_TIME_MICROS = 2 ** 53;

const MICROS_PER: Record<TimeFormat, number> = { epoch_s: 1e6, epoch_ms: 1e3, epoch_us: 1, epoch_ns: 1e-3 };
const INTEGER = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/;
const NUMERIC = /^(FLOAT|DOUBLE|DECIMAL(\(.*\))?)$/;
const TIMESTAMP = /^(TIMESTAMP|TIMESTAMP_S|TIMESTAMP_MS|TIMESTAMP_NS|DATETIME|DATE)$/;
const TIMESTAMPTZ = /^TIMESTAMP WITH TIME ZONE$/;

/** How the time column is read: what kind of values it holds. */
export type TimeKind = 'timestamp' | 'timestamptz' | 'integer' | 'number' | 'text';

/** The kind of a time column of DuckDB type `duckType`; AppError invalid for types that cannot hold times. */
export function timeKindOf(column: string, duckType: string): TimeKind {
  if (TIMESTAMPTZ.test(duckType)) return 'timestamptz';
  if (TIMESTAMP.test(duckType)) return 'timestamp';
  if (INTEGER.test(duckType)) return 'integer';
  if (NUMERIC.test(duckType)) return 'number';
  if (duckType === 'VARCHAR') return 'text';
  throw invalid(`time column '${column}' has type ${duckType}: expected timestamps, dates, epoch numbers or RFC 3339 text`);
}

/**
 * The unit of epoch numbers judged by magnitude (the largest absolute value of a sample):
 * below 1e11 seconds (year 5138), below 1e14 milliseconds, below 1e17 microseconds, else nanoseconds.
 */
export function epochUnitOf(maxAbs: number): TimeFormat {
  if (maxAbs < 1e11) return 'epoch_s';
  if (maxAbs < 1e14) return 'epoch_ms';
  if (maxAbs < 1e17) return 'epoch_us';
  return 'epoch_ns';
}

/** A TIMESTAMP-valued SQL expression for column `ident` (already quoted) of kind `kind`; `unit` is needed for numbers. */
export function timeExpression(ident: string, kind: TimeKind, unit: TimeFormat | null): string {
  const guard = (micros: string) => `CASE WHEN abs(${micros}) <= ${MAX_TIME_MICROS} THEN make_timestamp((${micros})::BIGINT) END`;
  const bounded = (ts: string) =>
    `CASE WHEN ${ts} BETWEEN make_timestamp(${-MAX_TIME_MICROS}::BIGINT) AND make_timestamp(${MAX_TIME_MICROS}::BIGINT) THEN ${ts}::TIMESTAMP END`;
  switch (kind) {
    case 'timestamptz':
      // epoch_us of a TIMESTAMPTZ is the UTC instant whatever the session time zone.
      return bounded(`make_timestamp(epoch_us(${ident}))`);
    case 'timestamp':
      return bounded(`${ident}::TIMESTAMP`);
    case 'text':
      if (unit) return timeExpression(`try_cast(${ident} AS ${unit === 'epoch_ns' ? 'BIGINT' : 'DOUBLE'})`, unit === 'epoch_ns' ? 'integer' : 'number', unit);
      // Text without a zone (`2024-01-01 10:00:00`) is read as UTC: the import connection's TimeZone is UTC.
      return bounded(`make_timestamp(epoch_us(try_cast(${ident} AS TIMESTAMPTZ)))`);
    case 'integer': {
      if (!unit) throw new Error('invariant broken: integer time needs a unit');
      const v = `${ident}::HUGEINT`;
      // Nanoseconds floor to the microsecond below (also for times before 1970).
      if (unit === 'epoch_ns') return guard(`(${v} - ((${v} % 1000) + 1000) % 1000) // 1000`);
      return guard(`${v} * ${MICROS_PER[unit]}`);
    }
    case 'number':
      if (!unit) throw new Error('invariant broken: numeric time needs a unit');
      return guard(`floor(${ident}::DOUBLE * ${MICROS_PER[unit]})`);
  }
}

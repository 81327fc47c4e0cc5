/**
 * Object keys and the data-file layout. Keys built from user-supplied names are checked so that no
 * key can leave the storage root: no `..` or `.` segments, no absolute paths, no NUL or backslash.
 */
import { invalid } from '../lib/errors.ts';
import { assertDatabaseName, assertMeasurementName } from '../lib/names.ts';

/** Throws AppError invalid unless `key` is a relative, normalized, slash-separated path. */
export function assertKey(key: string): string {
  if (typeof key !== 'string' || key.length === 0) throw invalid('cannot use storage key: it is empty');
  if (key.includes('\0')) throw invalid('cannot use storage key: it contains a NUL character');
  if (key.includes('\\')) throw invalid(`cannot use storage key '${key}': backslashes are not allowed`);
  if (key.startsWith('/')) throw invalid(`cannot use storage key '${key}': it is absolute`);
  for (const segment of key.split('/'))
    if (segment === '' || segment === '.' || segment === '..') throw invalid(`cannot use storage key '${key}': empty, '.' or '..' segment`);
  return key;
}

/** Throws AppError invalid unless `prefix` is `''` or a valid key ending in `/`. */
export function assertPrefix(prefix: string): string {
  if (prefix === '') return prefix;
  if (!prefix.endsWith('/')) throw invalid(`cannot use storage prefix '${prefix}': it must end with '/'`);
  assertKey(prefix.slice(0, -1));
  return prefix;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
let lastNanos = 0n;

/** Wall-clock epoch nanoseconds, strictly increasing within this process (file names never collide). */
export function uniqueNanos(): bigint {
  const now = BigInt(Date.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
  lastNanos = now > lastNanos ? now : lastNanos + 1n;
  return lastNanos;
}

/**
 * Key of a data file: `<db>/<m>/YYYY/MM/DD/HH/<m>_<YYYYMMDD_HHMMSS>_<nanos>.parquet`. The folders are
 * the UTC hour of the data (`hourMicros`); the name carries the write time (UTC, to the second, then its
 * 9-digit nanosecond part), so names sort by write time inside an hour folder and never collide.
 * Every writer of a data file takes a new key here and never puts other bytes under an existing one:
 * the query engine trusts its cached footers per path without checking the file (duckdb/sandbox.ts).
 */
export function dataFileKey(database: string, measurement: string, hourMicros: number, writeNanos: bigint = uniqueNanos()): string {
  assertDatabaseName(database);
  assertMeasurementName(measurement);
  const h = new Date(hourMicros / 1000);
  const folder = `${database}/${measurement}/${h.getUTCFullYear()}/${pad(h.getUTCMonth() + 1)}/${pad(h.getUTCDate())}/${pad(h.getUTCHours())}`;
  const w = new Date(Number(writeNanos / 1_000_000n));
  const stamp = `${w.getUTCFullYear()}${pad(w.getUTCMonth() + 1)}${pad(w.getUTCDate())}_${pad(w.getUTCHours())}${pad(w.getUTCMinutes())}${pad(w.getUTCSeconds())}`;
  return `${folder}/${measurement}_${stamp}_${pad(Number(writeNanos % 1_000_000_000n), 9)}.parquet`;
}

/** The parts of a data-file key, or null when `key` does not follow the layout. */
export function parseDataFileKey(key: string): { database: string; measurement: string; hourMicros: number } | null {
  const m = /^([^/]+)\/([^/]+)\/(\d{4})\/(\d{2})\/(\d{2})\/(\d{2})\/([^/]+)\.parquet$/.exec(key);
  if (!m) return null;
  const hourMs = Date.UTC(Number(m[3]), Number(m[4]) - 1, Number(m[5]), Number(m[6]));
  return { database: m[1]!, measurement: m[2]!, hourMicros: hourMs * 1000 };
}

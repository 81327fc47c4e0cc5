/**
 * SQL literal helpers for the queries the memory service sends to the time-series query API.
 * Every value that reaches SQL goes through one of these; nothing is concatenated raw.
 */
import { invalid } from '../lib/errors.ts';

/** A single-quoted SQL string literal; quotes are doubled (DuckDB treats backslashes literally). NUL is refused. */
export function sqlString(value: string): string {
  if (value.includes('\u0000')) throw invalid('text must not contain NUL characters');
  return `'${value.replaceAll("'", "''")}'`;
}

/** A comma-separated list of string literals, for `IN (...)`. Callers guarantee a non-empty list. */
export function sqlStringList(values: readonly string[]): string {
  return values.map(sqlString).join(', ');
}

/** A finite number literal; anything else is a programming error, not user input (zod has checked it). */
export function sqlNumber(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`cannot render ${value} as a SQL number`);
  return String(value);
}

/** A TIMESTAMP literal for epoch microseconds, in UTC, as the storage keeps `time`. Absolute literals let the engine prune files. */
export function sqlTime(epochUs: number): string {
  return `TIMESTAMP '${isoMicros(epochUs).replace('T', ' ').replace('Z', '')}'`;
}

/** Epoch microseconds as RFC 3339 UTC with six fractional digits: `2025-01-02T03:04:05.123456Z`. */
export function isoMicros(epochUs: number): string {
  const ms = Math.floor(epochUs / 1000);
  const micros = String(epochUs - ms * 1000).padStart(3, '0');
  return new Date(ms).toISOString().replace('Z', `${micros}Z`);
}

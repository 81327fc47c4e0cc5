/**
 * The contract between every ingest parser, the WAL, the buffers and the Parquet writer:
 * one measurement's points as typed columns. No row objects on the hot path.
 */

/** Storage type of a non-time column. Parquet: DOUBLE, BIGINT, BOOLEAN, VARCHAR. */
export type ColumnType = 'float64' | 'int64' | 'bool' | 'string';

/** A column of `length` values. `valid[i] === 0` marks a NULL; a null `valid` means every row is present. */
export type Column =
  | { type: 'float64'; values: Float64Array; valid: Uint8Array | null; tag: false }
  | { type: 'int64'; values: BigInt64Array; valid: Uint8Array | null; tag: false }
  | { type: 'bool'; values: Uint8Array; valid: Uint8Array | null; tag: false }
  | { type: 'string'; values: (string | null)[]; valid: null; tag: boolean };

/** One measurement's points, in arrival order (the buffer sorts by time at flush). */
export interface ColumnBatch {
  measurement: string;
  length: number;
  /**
   * Epoch microseconds (UTC) as float64: exact for every integer below 2^53 µs, i.e. until year 2255,
   * and far cheaper to sort and compare in JS than BigInt.
   */
  time: Float64Array;
  /** Every column except `time`. Tag columns are string columns with `tag: true`. */
  columns: Map<string, Column>;
}

/** Number of microseconds in one hour: the partition size. */
export const MICROS_PER_HOUR = 3_600_000_000;

/** UTC hour (epoch µs, floored) that a time value belongs to. */
export function hourOf(timeMicros: number): number {
  return Math.floor(timeMicros / MICROS_PER_HOUR) * MICROS_PER_HOUR;
}

/**
 * The contract between every ingest parser, the WAL, the buffers and the Parquet writer:
 * one measurement's points as typed columns. No row objects on the hot path.
 */

/** Storage type of a non-time column. Parquet: DOUBLE, BIGINT, BOOLEAN, VARCHAR. */
export type ColumnType = 'float64' | 'int64' | 'bool' | 'string';

/**
 * A string column's values as one code per row into a small table of distinct values:
 * `values[i] === dictionary[codes[i]]`. `dictionary[0]` is always null (code 0 = NULL, so a zeroed
 * array is all NULLs); other entries are usually distinct, but readers must not rely on it.
 */
export interface StringDictionary {
  codes: Uint32Array;
  dictionary: (string | null)[];
}

/** A column of `length` values. `valid[i] === 0` marks a NULL; a null `valid` means every row is present. */
export type Column =
  | { type: 'float64'; values: Float64Array; valid: Uint8Array | null; tag: false }
  | { type: 'int64'; values: BigInt64Array; valid: Uint8Array | null; tag: false }
  | { type: 'bool'; values: Uint8Array; valid: Uint8Array | null; tag: false }
  | {
      type: 'string';
      values: (string | null)[];
      valid: null;
      tag: boolean;
      /**
       * Optional second form of the same values, set by parsers that decode strings straight into codes
       * (see `dictionaryColumn`). Writers use it to skip per-value work; every reader may still use `values`.
       */
      dict?: StringDictionary;
    };

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

/**
 * A string column held as codes. `values` is built from them on first use (and kept), so consumers
 * that read `values` keep working while the flush path never materializes one string per row.
 * `dict` is not enumerable: equality checks, JSON and structured clones see the plain column.
 */
export function dictionaryColumn(dict: StringDictionary, tag: boolean): Column & { type: 'string' } {
  const col = { type: 'string', valid: null, tag } as Column & { type: 'string' };
  Object.defineProperty(col, 'dict', { value: dict, enumerable: false });
  Object.defineProperty(col, 'values', {
    enumerable: true,
    configurable: true,
    get() {
      const { codes, dictionary } = dict;
      const values = new Array<string | null>(codes.length);
      for (let i = 0; i < codes.length; i++) values[i] = dictionary[codes[i]!]!;
      Object.defineProperty(col, 'values', { value: values, enumerable: true, writable: true });
      return values;
    },
  });
  return col;
}

/** Number of microseconds in one hour: the partition size. */
export const MICROS_PER_HOUR = 3_600_000_000;

/** UTC hour (epoch µs, floored) that a time value belongs to. */
export function hourOf(timeMicros: number): number {
  return Math.floor(timeMicros / MICROS_PER_HOUR) * MICROS_PER_HOUR;
}

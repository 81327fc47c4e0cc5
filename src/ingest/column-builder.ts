/**
 * Growable typed columns that parsers fill row by row and turn into a ColumnBatch.
 * One class for every column type keeps hot call sites monomorphic; absent values become NULLs
 * lazily (a row is only touched for the columns it has), so sparse fields cost nothing per row.
 */
import { type Column, type ColumnBatch, type ColumnType, dictionaryColumn } from './column-batch.ts';
import { noteStringChars } from './column-bytes.ts';
import { sharedBigInt64, sharedFloat64, sharedUint8, trimShared } from './shared-arrays.ts';
import type { StringCodes } from './string-codes.ts';

/** Column kind codes: small integers so hot loops compare numbers, not strings. */
export const KIND_FLOAT = 0;
export const KIND_INT = 1;
export const KIND_BOOL = 2;
export const KIND_STRING = 3;

/** ColumnType of each kind code, and a word for it in error messages. */
export const KIND_TYPES: readonly ColumnType[] = ['float64', 'int64', 'bool', 'string'];
export const KIND_WORDS: readonly string[] = ['float', 'integer', 'boolean', 'string'];

const TWO_32 = 4294967296;
// Safe integers are written as two 32-bit halves into the BigInt64Array's memory, which avoids
// allocating a BigInt per value; the halves are laid out little-endian on every platform Bun targets.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const EMPTY_F64 = new Float64Array(0);
const EMPTY_I64 = new BigInt64Array(0);
const EMPTY_I32 = new Int32Array(0);
const EMPTY_U8 = new Uint8Array(0);
const NO_STRINGS: (string | null)[] = [];

/** One column under construction; `len` rows are filled, rows before `len` without a value are NULL. */
export class ColumnBuilder {
  readonly name: string;
  kind: number;
  readonly tag: boolean;
  /** The batch row being parsed when this column appeared: rolling that row back removes the column. */
  readonly createdAt: number;
  len = 0;
  cap: number;
  f64: Float64Array = EMPTY_F64;
  i64: BigInt64Array = EMPTY_I64;
  i32: Int32Array = EMPTY_I32;
  u8: Uint8Array = EMPTY_U8;
  strs: (string | null)[] = NO_STRINGS;
  /** Set for a string column kept as dictionary codes (`setStringBytes`) instead of `strs`. */
  codes: StringCodes | null = null;
  valid: Uint8Array | null = null;
  /** Characters stored through `setString` into `strs` (rolled-back rows included: an estimate for column-bytes.ts). */
  private chars = 0;

  constructor(name: string, kind: number, tag: boolean, createdAt: number, capacity: number) {
    this.name = name;
    this.kind = kind;
    this.tag = tag;
    this.createdAt = createdAt;
    this.cap = Math.max(16, capacity);
    if (kind === KIND_STRING) this.strs = [];
    else this.allocate(this.cap, true);
  }

  /** Stores a float at `row` (rows skipped since the last value become NULL). */
  setFloat(row: number, v: number): void {
    if (row > this.len) this.fillNulls(row);
    else if (row >= this.cap) this.grow(row + 1);
    this.f64[row] = v;
    if (this.valid !== null) this.valid[row] = 1;
    this.len = row + 1;
  }

  /** Stores a safe integer (|v| <= 2^53 - 1) at `row` without allocating a BigInt. */
  setInt(row: number, v: number): void {
    if (row > this.len) this.fillNulls(row);
    else if (row >= this.cap) this.grow(row + 1);
    if (LITTLE_ENDIAN) {
      const hi = Math.floor(v / TWO_32);
      this.i32[2 * row] = (v - hi * TWO_32) | 0;
      this.i32[2 * row + 1] = hi | 0;
    } else {
      this.i64[row] = BigInt(v);
    }
    if (this.valid !== null) this.valid[row] = 1;
    this.len = row + 1;
  }

  /** Stores an int64 given as a BigInt (already range-checked by the caller). */
  setBigInt(row: number, v: bigint): void {
    if (row > this.len) this.fillNulls(row);
    else if (row >= this.cap) this.grow(row + 1);
    this.i64[row] = v;
    if (this.valid !== null) this.valid[row] = 1;
    this.len = row + 1;
  }

  /** Stores a boolean (0 or 1) at `row`. */
  setBool(row: number, v: number): void {
    if (row > this.len) this.fillNulls(row);
    else if (row >= this.cap) this.grow(row + 1);
    this.u8[row] = v;
    if (this.valid !== null) this.valid[row] = 1;
    this.len = row + 1;
  }

  /** Stores a string (or null) at `row`. */
  setString(row: number, v: string | null): void {
    if (row > this.len) this.fillNulls(row);
    if (this.codes !== null) {
      this.codes.setValue(row, v);
      this.len = row + 1;
      return;
    }
    if (row === this.strs.length) this.strs.push(v);
    else this.strs[row] = v;
    if (v !== null) this.chars += v.length;
    this.len = row + 1;
  }

  /** Stores the UTF-8 string in bytes [start, end) of `buf` at `row` of a column with `codes`. */
  setStringBytes(row: number, buf: Buffer, start: number, end: number): void {
    if (row > this.len) this.fillNulls(row);
    this.codes!.set(row, buf, start, end);
    this.len = row + 1;
  }

  /** `setStringBytes` with the bytes' FNV-1a hash already computed by the parser. */
  setStringHashed(row: number, buf: Buffer, start: number, end: number, hash: number): void {
    if (row > this.len) this.fillNulls(row);
    this.codes!.setHashed(row, buf, start, end, hash);
    this.len = row + 1;
  }

  /** Forgets every value at or after `row` (used when a line is rejected half-way). */
  truncate(row: number): void {
    if (this.len <= row) return;
    this.len = row;
    if (this.kind === KIND_STRING && this.codes === null) this.strs.length = row;
  }

  /** Turns an integer column into a float column (MessagePack mixes int and float encodings of numbers). */
  promoteToFloat(): void {
    if (this.kind !== KIND_INT) throw new Error(`invariant broken: cannot promote a ${KIND_WORDS[this.kind]} column to float`);
    const f64 = new Float64Array(this.cap);
    const i64 = this.i64;
    for (let i = 0; i < this.len; i++) f64[i] = Number(i64[i]);
    this.f64 = f64;
    this.i64 = EMPTY_I64;
    this.i32 = EMPTY_I32;
    this.kind = KIND_FLOAT;
  }

  /** The finished column, NULL-padded to `length` rows; arrays are trimmed to the exact length. */
  toColumn(length: number): Column {
    if (length > this.len) this.fillNulls(length);
    const valid = this.valid === null ? null : trim(this.valid, length);
    switch (this.kind) {
      case KIND_FLOAT:
        return { type: 'float64', values: trim(this.f64, length), valid, tag: false };
      case KIND_INT:
        return { type: 'int64', values: trim(this.i64, length), valid, tag: false };
      case KIND_BOOL:
        return { type: 'bool', values: trim(this.u8, length), valid, tag: false };
      default:
        if (this.codes !== null) return dictionaryColumn(this.codes.finish(length), this.tag);
        this.strs.length = length;
        noteStringChars(this.strs, this.chars);
        return { type: 'string', values: this.strs, valid: null, tag: this.tag };
    }
  }

  /** Marks rows [len, row) NULL. */
  private fillNulls(row: number): void {
    if (this.codes !== null) {
      // Rows after a truncation may still hold codes: they become NULL (code 0).
      for (let r = this.len; r < row; r++) this.codes.setNull(r);
    } else if (this.kind === KIND_STRING) {
      const strs = this.strs;
      strs.length = this.len;
      while (strs.length < row) strs.push(null);
    } else {
      if (row >= this.cap) this.grow(row + 1);
      if (this.valid === null) {
        this.valid = new Uint8Array(this.cap);
        this.valid.fill(1, 0, this.len);
      }
      this.valid.fill(0, this.len, row);
      // A NULL's value is 0: the first allocation may be reused memory that was not zeroed (see allocate).
      if (this.kind === KIND_FLOAT) this.f64.fill(0, this.len, row);
      else if (this.kind === KIND_INT) this.i64.fill(0n, this.len, row);
      else this.u8.fill(0, this.len, row);
    }
    this.len = row;
  }

  private grow(min: number): void {
    const cap = Math.max(this.cap * 2, min);
    const { f64, i64, u8, valid } = this;
    this.allocate(cap, false);
    if (this.kind === KIND_FLOAT) this.f64.set(f64.subarray(0, this.len));
    else if (this.kind === KIND_INT) this.i64.set(i64.subarray(0, this.len));
    else if (this.kind === KIND_BOOL) this.u8.set(u8.subarray(0, this.len));
    if (valid !== null) {
      this.valid = new Uint8Array(cap);
      this.valid.set(valid.subarray(0, this.len));
    }
    this.cap = cap;
  }

  /**
   * Shared memory for the first allocation (its size is usually final: MessagePack columns say their
   * length), ordinary memory when growing; toColumn moves grown arrays into shared memory once. The
   * shared memory is not zeroed when reused: every row below `len` is set or made NULL (fillNulls
   * writes 0), and toColumn pads to the final length that way, so no row a reader sees is left as found.
   */
  private allocate(cap: number, shared: boolean): void {
    if (this.kind === KIND_FLOAT) this.f64 = shared ? sharedFloat64(cap, true) : new Float64Array(cap);
    else if (this.kind === KIND_INT) {
      this.i64 = shared ? sharedBigInt64(cap, true) : new BigInt64Array(cap);
      this.i32 = new Int32Array(this.i64.buffer, this.i64.byteOffset, cap * 2);
    } else if (this.kind === KIND_BOOL) this.u8 = shared ? sharedUint8(cap, true) : new Uint8Array(cap);
  }
}

/** One measurement's rows under construction: a time column plus named ColumnBuilders. */
export class BatchBuilder {
  readonly measurement: string;
  /** Number of committed rows; the row being parsed has index `len`. */
  len = 0;
  time: Float64Array;
  readonly columns = new Map<string, ColumnBuilder>();

  constructor(measurement: string, capacity = 1024) {
    this.measurement = measurement;
    // Every committed row's time is written; `finish` trims to the committed rows.
    this.time = sharedFloat64(Math.max(16, capacity), true);
  }

  /** Creates a column first seen while parsing row `len`. */
  addColumn(name: string, kind: number, tag: boolean): ColumnBuilder {
    const col = new ColumnBuilder(name, kind, tag, this.len, this.time.length);
    this.columns.set(name, col);
    return col;
  }

  /** Commits the row being parsed with its time (epoch µs). */
  commitRow(timeMicros: number): void {
    const row = this.len;
    if (row >= this.time.length) {
      const time = new Float64Array(this.time.length * 2);
      time.set(this.time);
      this.time = time;
    }
    this.time[row] = timeMicros;
    this.len = row + 1;
  }

  /** Undoes every value written for the uncommitted row `len`, and the columns it introduced. */
  rollbackRow(): void {
    const row = this.len;
    for (const [name, col] of this.columns) {
      if (col.createdAt === row) this.columns.delete(name);
      else col.truncate(row);
    }
  }

  /** The finished batch (columns with no value in any committed row are left out). */
  finish(): ColumnBatch {
    const length = this.len;
    const columns = new Map<string, Column>();
    for (const [name, col] of this.columns) {
      if (col.len > 0) columns.set(name, col.toColumn(length));
    }
    return { measurement: this.measurement, length, time: trim(this.time, length), columns };
  }
}

const trim = trimShared;

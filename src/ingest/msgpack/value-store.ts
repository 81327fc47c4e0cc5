/**
 * MessagePack values -> ColumnBuilder cells. The wire encoding decides the column type: integer
 * encodings make an int64 column, float encodings a float64 one, and a number column that mixes
 * both becomes float64 (JS encoders write 12.0 as an integer, so a float series often mixes them).
 */
import { invalid } from '../../lib/errors.ts';
import { ByteInterner, hashBytes } from '../byte-interner.ts';
import { StringCodes } from '../string-codes.ts';
import { ColumnBuilder, KIND_BOOL, KIND_FLOAT, KIND_INT, KIND_STRING, KIND_WORDS } from '../column-builder.ts';
import { MsgpackReader, T_BOOL, T_FLOAT, T_INT, T_NIL, T_STRING, TYPE_WORDS } from './msgpack-reader.ts';

const TWO_32 = 4294967296;
const INT64_MAX = 9223372036854775807n;
// One interner per process: parsing is synchronous, and tag values repeat across requests too.
const interner = new ByteInterner();

/** Where values go and how errors name them: column `name`, and whether strings are tags. */
export interface ValueTarget {
  name: string;
  /** "column 'x'" or "field 'x' of measurement 'm'". */
  label: string;
  stringsAreTags: boolean;
  /** Rows already allocated for a new column (its final length when known). */
  capacity: number;
  /** Keep a string column as dictionary codes (whole columns of the columnar form). */
  codes?: boolean;
}

// Below this many rows a string column stays a plain array: the codes' lookup table would cost more.
const MIN_CODED_ROWS = 256;

/**
 * Reads the value at the cursor into `col` at `row`, creating the column on its first non-null
 * value; returns the column (null while only nulls were seen). Throws AppError invalid on a type
 * mix other than int/float, or on a value that is not a scalar.
 */
export function storeValue(r: MsgpackReader, col: ColumnBuilder | null, row: number, target: ValueTarget): ColumnBuilder | null {
  const kind = r.kindAt();
  switch (kind) {
    case T_FLOAT: {
      const v = r.readFloat();
      if (col === null) col = newColumn(target, KIND_FLOAT, row);
      else if (col.kind === KIND_INT) col.promoteToFloat();
      else if (col.kind !== KIND_FLOAT) throw mixed(target, row, KIND_FLOAT, col.kind);
      col.setFloat(row, v);
      return col;
    }
    case T_INT: {
      const v = r.readInt();
      if (col === null) col = newColumn(target, KIND_INT, row);
      if (col.kind === KIND_INT) {
        if (!Number.isNaN(v)) col.setInt(row, v);
        else col.setBigInt(row, int64Of(r, target, row));
      } else if (col.kind === KIND_FLOAT) {
        col.setFloat(row, Number.isNaN(v) ? r.hi * TWO_32 + r.lo : v);
      } else {
        throw mixed(target, row, KIND_INT, col.kind);
      }
      return col;
    }
    case T_STRING: {
      const len = r.readStringHeader();
      const start = r.pos;
      r.pos += len;
      if (col === null) col = newColumn(target, KIND_STRING, row);
      else if (col.kind !== KIND_STRING) throw mixed(target, row, KIND_STRING, col.kind);
      if (col.codes !== null) col.setStringBytes(row, r.buf, start, start + len);
      else col.setString(row, internString(r.buf, start, start + len));
      return col;
    }
    case T_BOOL: {
      const v = r.buf[r.pos++] === 0xc3 ? 1 : 0;
      if (col === null) col = newColumn(target, KIND_BOOL, row);
      else if (col.kind !== KIND_BOOL) throw mixed(target, row, KIND_BOOL, col.kind);
      col.setBool(row, v);
      return col;
    }
    case T_NIL:
      r.pos++;
      return col;
    default:
      throw invalid(`cannot decode ${target.label}: row ${row} is ${article(TYPE_WORDS[kind])}, not a scalar value`);
  }
}

/** Decodes an array of `n` values at the cursor (header already read) into one column; null if all are null. */
export function decodeColumn(r: MsgpackReader, n: number, target: ValueTarget): ColumnBuilder | null {
  let col: ColumnBuilder | null = null;
  const buf = r.buf;
  const view = r.view;
  for (let i = 0; i < n; i++) {
    // Fast path for the common float64 series: a run of float64 values goes straight into the array
    // (the column was created with room for all n rows, and rows before i are filled).
    if (col !== null && col.kind === KIND_FLOAT && buf[r.pos] === 0xcb && r.pos + 9 <= r.end) {
      if (col.len === i && col.valid === null && col.cap >= n) {
        const f64 = col.f64;
        const end = r.end;
        let p = r.pos;
        let j = i;
        while (j < n && buf[p] === 0xcb && p + 9 <= end) {
          f64[j++] = view.getFloat64(p + 1);
          p += 9;
        }
        r.pos = p;
        col.len = j;
        i = j - 1;
      } else {
        col.setFloat(i, view.getFloat64(r.pos + 1));
        r.pos += 9;
      }
    } else if (col !== null && col.codes !== null && (buf[r.pos]! & 0xe0) === 0xa0 && r.pos + 1 + (buf[r.pos]! & 0x1f) <= r.end) {
      // Fast path for tag-like strings (fixstr, under 32 bytes) of a coded column.
      const start = r.pos + 1;
      const end = start + (buf[r.pos]! & 0x1f);
      col.setStringBytes(i, buf, start, end);
      r.pos = end;
    } else {
      col = storeValue(r, col, i, target);
    }
  }
  return col;
}

/** The string in bytes [start, end), shared with earlier equal strings. */
export function internString(buf: Buffer, start: number, end: number): string {
  const hash = hashBytes(buf, start, end);
  const cached = interner.get(buf, start, end, hash);
  if (cached !== null) return cached;
  const str = buf.toString('utf8', start, end);
  interner.set(buf, start, end, hash, str);
  return str;
}

function int64Of(r: MsgpackReader, target: ValueTarget, row: number): bigint {
  const big = (BigInt(r.hi) << 32n) + BigInt(r.lo);
  if (big > INT64_MAX) throw invalid(`cannot decode ${target.label}: row ${row} is ${big}, above the int64 maximum`);
  return big;
}

function newColumn(target: ValueTarget, kind: number, row: number): ColumnBuilder {
  const capacity = Math.max(target.capacity, row + 1);
  const col = new ColumnBuilder(target.name, kind, kind === KIND_STRING && target.stringsAreTags, 0, capacity);
  if (kind === KIND_STRING && target.codes === true && capacity >= MIN_CODED_ROWS) col.codes = new StringCodes(capacity, interner);
  return col;
}

function mixed(target: ValueTarget, row: number, kind: number, earlier: number) {
  return invalid(
    `cannot decode ${target.label}: mixed types, row ${row} is ${article(KIND_WORDS[kind])} but earlier rows are ${KIND_WORDS[earlier]}s`,
  );
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`;
}

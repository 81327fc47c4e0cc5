/** The columnar form's `columns` map -> time and typed columns of equal length. */
import { sharedFloat64 } from '../shared-arrays.ts';
import { invalid } from '../../lib/errors.ts';
import { columnNameProblem } from '../../lib/names.ts';
import type { Column } from '../column-batch.ts';
import type { ColumnBuilder } from '../column-builder.ts';
import { MsgpackReader, T_ARRAY, T_MAP, T_STRING, TYPE_WORDS } from './msgpack-reader.ts';
import { TimeReader } from './time-values.ts';
import { decodeColumn } from './value-store.ts';

/** Decoded `columns`: row count, time (epoch µs) and the other columns; all-null columns are left out. */
export interface DecodedColumns {
  length: number;
  time: Float64Array;
  columns: Map<string, Column>;
}

/**
 * Decodes the `columns` map at the cursor. String columns become tags (the columnar form has no
 * other way to mark them). A missing `time` column means `now` for every row.
 */
export function decodeColumns(r: MsgpackReader, now: number): DecodedColumns {
  if (r.kindAt() !== T_MAP) throw invalid(`cannot decode MessagePack write: 'columns' must be a map, found ${TYPE_WORDS[r.kindAt()]}`);
  const count = r.readMapHeader();
  if (count === 0) throw invalid("cannot decode MessagePack write: 'columns' is empty");
  let length = -1;
  let lengthFrom = '';
  let time: Float64Array | null = null;
  const builders: ColumnBuilder[] = [];
  const seen = new Set<string>();
  for (let c = 0; c < count; c++) {
    if (r.kindAt() !== T_STRING) throw invalid(`cannot decode MessagePack write: column names must be strings, found ${TYPE_WORDS[r.kindAt()]}`);
    const name = r.readString();
    const problem = columnNameProblem(name);
    if (problem !== null) throw invalid(`cannot decode MessagePack write: ${problem}`);
    if (seen.has(name)) throw invalid(`cannot decode column '${name}': the column appears twice`);
    seen.add(name);
    if (r.kindAt() !== T_ARRAY) throw invalid(`cannot decode column '${name}': expected an array of values, found ${TYPE_WORDS[r.kindAt()]}`);
    const n = r.readArrayHeader();
    if (length < 0) {
      length = n;
      lengthFrom = name;
    } else if (n !== length) {
      throw invalid(`cannot decode column '${name}': it has ${n} values but column '${lengthFrom}' has ${length}; columns must be equal length`);
    }
    if (name === 'time') {
      time = decodeTime(r, n);
    } else {
      const col = decodeColumn(r, n, { name, label: `column '${name}'`, stringsAreTags: true, capacity: n, codes: true });
      if (col !== null) builders.push(col);
    }
  }
  const columns = new Map<string, Column>();
  for (const col of builders) columns.set(col.name, col.toColumn(length));
  return { length, time: time ?? sharedFloat64(length, true).fill(now), columns };
}

function decodeTime(r: MsgpackReader, n: number): Float64Array {
  const out = sharedFloat64(n, true);
  const reader = new TimeReader('time');
  for (let i = 0; i < n; i++) out[i] = reader.read(r, i);
  return out;
}

/** The row form `{m, t, tags, fields}`: rows grouped by measurement into columns. */
import { invalid } from '../../lib/errors.ts';
import { columnNameProblem, measurementNameProblem } from '../../lib/names.ts';
import type { ColumnBatch } from '../column-batch.ts';
import { BatchBuilder, type ColumnBuilder, KIND_STRING } from '../column-builder.ts';
import { MsgpackReader, T_NIL, T_STRING, TYPE_WORDS } from './msgpack-reader.ts';
import { NO_UNIT, TimeReader } from './time-values.ts';
import { internString, storeValue } from './value-store.ts';

/** Where a row's parts start in the body (-1 when absent); they are read once the measurement is known. */
export interface RowParts {
  t: number;
  tags: number;
  fields: number;
}

/** Accumulates rows by measurement. Each row's `t` is judged alone for its unit (a one-value column). */
export class RowGroups {
  private readonly groups = new Map<string, BatchBuilder>();
  private readonly time = new TimeReader('t');

  constructor(private readonly now: number) {}

  /** Adds the row of measurement `m` whose parts are at `parts`; the cursor is restored afterwards. */
  add(r: MsgpackReader, m: string, parts: RowParts): void {
    let batch = this.groups.get(m);
    if (batch === undefined) {
      const problem = measurementNameProblem(m);
      if (problem !== null) throw invalid(`cannot decode MessagePack write: ${problem}`);
      batch = new BatchBuilder(m, 64);
      this.groups.set(m, batch);
    }
    const after = r.pos;
    const row = batch.len;
    if (parts.tags >= 0) {
      r.pos = parts.tags;
      this.readTags(r, batch, row);
    }
    r.pos = parts.fields;
    this.readFields(r, batch, row);
    let time = this.now;
    if (parts.t >= 0) {
      r.pos = parts.t;
      this.time.unit = NO_UNIT;
      if (r.kindAt() !== T_NIL) time = this.time.read(r, row);
    }
    batch.commitRow(time);
    r.pos = after;
  }

  /** One ColumnBatch per measurement, in first-seen order. */
  finish(): ColumnBatch[] {
    return [...this.groups.values()].map((b) => b.finish());
  }

  private readTags(r: MsgpackReader, batch: BatchBuilder, row: number): void {
    const n = r.readMapHeader();
    for (let i = 0; i < n; i++) {
      const name = readKey(r, batch, 'tag');
      const kind = r.kindAt();
      if (kind === T_NIL) {
        r.pos++;
        continue;
      }
      if (kind !== T_STRING) throw invalid(`cannot decode tag '${name}' of measurement '${batch.measurement}': tag values must be strings, found ${TYPE_WORDS[kind]}`);
      let col = batch.columns.get(name);
      if (col === undefined) col = batch.addColumn(name, KIND_STRING, true);
      else if (!col.tag) throw invalid(`cannot decode tag '${name}' of measurement '${batch.measurement}': it is also a field`);
      if (col.len > row) throw invalid(`cannot decode tag '${name}' of measurement '${batch.measurement}': it appears twice in one row`);
      const len = r.readStringHeader();
      col.setString(row, internString(r.buf, r.pos, r.pos + len));
      r.pos += len;
    }
  }

  private readFields(r: MsgpackReader, batch: BatchBuilder, row: number): void {
    const n = r.readMapHeader();
    if (n === 0) throw invalid(`cannot decode MessagePack write: a row of measurement '${batch.measurement}' has no fields`);
    for (let i = 0; i < n; i++) {
      const name = readKey(r, batch, 'field');
      const label = `field '${name}' of measurement '${batch.measurement}'`;
      const col: ColumnBuilder | null = batch.columns.get(name) ?? null;
      if (col !== null && col.tag) throw invalid(`cannot decode ${label}: it is also a tag`);
      if (col !== null && col.len > row) throw invalid(`cannot decode ${label}: it appears twice in one row`);
      const stored = storeValue(r, col, row, { name, label, stringsAreTags: false, capacity: batch.time.length });
      if (col === null && stored !== null) batch.columns.set(name, stored);
    }
  }
}

function readKey(r: MsgpackReader, batch: BatchBuilder, what: string): string {
  if (r.kindAt() !== T_STRING) throw invalid(`cannot decode MessagePack write: ${what} names must be strings, found ${TYPE_WORDS[r.kindAt()]}`);
  const name = r.readString();
  const problem = name === 'time' ? "the name 'time' is reserved for the timestamp" : columnNameProblem(name);
  if (problem !== null) throw invalid(`cannot decode ${what} '${name}' of measurement '${batch.measurement}': ${problem}`);
  return name;
}

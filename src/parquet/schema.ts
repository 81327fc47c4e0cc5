/**
 * The column set of several ColumnBatches taken together (schema union): a column missing from a
 * batch is NULL for its rows; int64 meeting float64 widens to float64; any other type mix widens
 * to string (values rendered as text), so one odd write never makes a measurement unreadable.
 */
import type { ColumnBatch, ColumnType } from '../ingest/index.ts';

/** One column of a union schema. `tag` is true when any batch marks it as a tag. */
export interface SchemaColumn {
  name: string;
  type: ColumnType;
  tag: boolean;
}

/** The type two column types widen to. */
export function widen(a: ColumnType, b: ColumnType): ColumnType {
  if (a === b) return a;
  if ((a === 'int64' && b === 'float64') || (a === 'float64' && b === 'int64')) return 'float64';
  return 'string';
}

/** Whether a column of type `incoming` can join buffered rows of type `existing` without widening to string. */
export function compatible(existing: ColumnType, incoming: ColumnType): boolean {
  return widen(existing, incoming) !== 'string' || (existing === 'string' && incoming === 'string');
}

/** Union of the batches' columns in first-seen order (never includes `time`). */
export function unionSchema(batches: readonly ColumnBatch[]): SchemaColumn[] {
  const byName = new Map<string, SchemaColumn>();
  for (const b of batches)
    for (const [name, col] of b.columns) {
      const seen = byName.get(name);
      if (!seen) byName.set(name, { name, type: col.type, tag: col.tag });
      else {
        seen.type = widen(seen.type, col.type);
        seen.tag ||= col.tag;
      }
    }
  return [...byName.values()];
}

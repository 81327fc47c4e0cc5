/** The shape every encoder receives: result columns with their DuckDB type and reading plan. */
import type { DuckDBType } from '../../duckdb/index.ts';
import { columnKind, type ColumnKind } from './column-kind.ts';

/** One result column. */
export interface ResultColumn {
  name: string;
  /** DuckDB's type name, as JSON `types` reports it. */
  type: string;
  duckType: DuckDBType;
  kind: ColumnKind;
}

/** Describes result columns from their names and DuckDB types. */
export function resultColumns(names: readonly string[], types: readonly DuckDBType[]): ResultColumn[] {
  return names.map((name, i) => ({ name, type: types[i]!.toString(), duckType: types[i]!, kind: columnKind(types[i]!) }));
}

/**
 * The rewrite: each measurement reference becomes a reference to a per-query temporary view over
 * its files and buffered rows (created inside the query's transaction and rolled back with it).
 * The reference keeps its visible name: `db1.cpu` reads as `cpu`, an alias stays the alias.
 * Also builds the small SELECT that evaluates time-condition values in DuckDB itself, so literal
 * parsing, intervals and now() mean exactly what they mean in the query.
 */
import type { MeasurementRef } from './references.ts';
import type { Node, SerializedSql } from './tree.ts';

/** Quotes a SQL identifier. */
export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
/** Quotes a SQL string literal. */
export const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Points `ref.node` at view `view`, keeping the name the rest of the query uses for it. */
export function pointAtView(ref: MeasurementRef, view: string): void {
  const n = ref.node;
  if (!n.alias) n.alias = n.table_name;
  n.schema_name = '';
  n.catalog_name = '';
  n.table_name = view;
}

/** The SELECT body of a view over `files` (absolute paths) UNION ALL BY NAME the table `buffer`. */
export function viewBody(files: readonly string[], buffer: string | null): string {
  const scan = files.length > 0 ? `SELECT * FROM read_parquet([${files.map(literal).join(', ')}], union_by_name = true, hive_partitioning = false)` : null;
  const buf = buffer ? `SELECT * FROM ${ident(buffer)}` : null;
  if (scan && buf) return `${scan} UNION ALL BY NAME ${buf}`;
  // A measurement with nothing stored is an empty relation that still has its time column.
  return scan ?? buf ?? 'SELECT CAST(NULL AS TIMESTAMP) AS "time" WHERE false';
}

/** A tree selecting `TRY_CAST(<value> AS TIMESTAMP)` for each value, or null when there are none. */
export function boundsTree(values: readonly Node[]): SerializedSql | null {
  if (values.length === 0) return null;
  const cast = (child: Node): Node => ({
    class: 'CAST',
    type: 'OPERATOR_CAST',
    alias: '',
    query_location: 0,
    child,
    cast_type: { id: 'TIMESTAMP', type_info: null },
    try_cast: true,
  });
  const node: Node = {
    type: 'SELECT_NODE',
    modifiers: [],
    cte_map: { map: [] },
    select_list: values.map(cast),
    from_table: { type: 'EMPTY', alias: '', sample: null, query_location: 0 },
    where_clause: null,
    group_expressions: [],
    group_sets: [],
    aggregate_handling: 'STANDARD_HANDLING',
    having: null,
    sample: null,
    qualify: null,
  };
  return { error: false, statements: [{ node, named_param_map: [] }] };
}

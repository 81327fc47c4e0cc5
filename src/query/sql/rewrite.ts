/**
 * The rewrite: each measurement reference (a BASE_TABLE node) becomes, in place, a subquery over
 * its files and buffered rows, built as syntax-tree nodes (no SQL text is spliced). The reference
 * keeps its visible name: `db1.cpu` reads as `cpu`, an alias stays the alias, column aliases and
 * TABLESAMPLE stay attached. Also builds the SELECT that evaluates time-condition values in DuckDB.
 */
import type { MeasurementRef } from './references.ts';
import type { Node, SerializedSql } from './tree.ts';

/** Quotes a SQL identifier. */
export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
/** Quotes a SQL string literal. */
export const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** What one reference reads. */
export interface RefSource {
  /** Absolute file paths. */
  files: readonly string[];
  /** Read the files by column name (they may differ in columns and types). */
  unionByName: boolean;
  /** Temp table holding buffered rows, or null. */
  bufferTable: string | null;
  /** With neither files nor buffered rows: the columns (besides `time`) the empty relation carries, typed NULL. */
  emptyColumns?: readonly string[];
}

const at = { alias: '', query_location: 0 };
const typed = (id: string, value: unknown): Node => ({ class: 'CONSTANT', type: 'VALUE_CONSTANT', ...at, value: { type: { id, type_info: null }, is_null: false, value } });
const cast = (child: Node, id: string, tryCast = false, alias = ''): Node => ({
  class: 'CAST',
  type: 'OPERATOR_CAST',
  ...at,
  alias,
  child,
  cast_type: { id, type_info: null },
  try_cast: tryCast,
});
const fn = (name: string, children: Node[], schema = ''): Node => ({
  class: 'FUNCTION',
  type: 'FUNCTION',
  ...at,
  function_name: name,
  schema,
  children,
  filter: null,
  order_bys: { type: 'ORDER_MODIFIER', orders: [] },
  distinct: false,
  is_operator: false,
  export_state: false,
  catalog: '',
});
const namedFlag = (name: string, on: boolean): Node => ({
  class: 'COMPARISON',
  type: 'COMPARE_EQUAL',
  ...at,
  left: { class: 'COLUMN_REF', type: 'COLUMN_REF', ...at, column_names: [name] },
  right: cast(typed('VARCHAR', on ? 't' : 'f'), 'BOOLEAN'),
});
const STAR: Node = { class: 'STAR', type: 'STAR', ...at, relation_name: '', exclude_list: [], replace_list: [], columns: false, expr: null, qualified_exclude_list: [], rename_list: [] };
const EMPTY_FROM: Node = { type: 'EMPTY', alias: '', sample: null, query_location: 0 };

/** A SELECT node with the given list, FROM and WHERE. */
function select(list: Node[], from: Node, where: Node | null = null): Node {
  return {
    type: 'SELECT_NODE',
    modifiers: [],
    cte_map: { map: [] },
    select_list: list,
    from_table: from,
    where_clause: where,
    group_expressions: [],
    group_sets: [],
    aggregate_handling: 'STANDARD_HANDLING',
    having: null,
    sample: null,
    qualify: null,
  };
}

/** The query node reading `src`: files UNION ALL BY NAME buffered rows, or an empty relation with a time column. */
export function sourceNode(src: RefSource): Node {
  const args = [fn('list_value', src.files.map((f) => typed('VARCHAR', f)), 'main'), namedFlag('hive_partitioning', false)];
  if (src.unionByName) args.push(namedFlag('union_by_name', true));
  const scan =
    src.files.length > 0
      ? select([STAR], { type: 'TABLE_FUNCTION', ...at, sample: null, function: fn('read_parquet', args), column_name_alias: [], with_ordinality: 'WITHOUT_ORDINALITY' })
      : null;
  const buf = src.bufferTable
    ? select([STAR], { type: 'BASE_TABLE', ...at, sample: null, schema_name: '', table_name: src.bufferTable, column_name_alias: [], catalog_name: '', at_clause: null })
    : null;
  if (scan && buf) return { type: 'SET_OPERATION_NODE', modifiers: [], cte_map: { map: [] }, setop_type: 'UNION_BY_NAME', left: scan, right: buf, setop_all: true };
  // A measurement with nothing stored is an empty relation that still has its time column.
  // Other columns the query names are typed NULL, which binds in any function or comparison.
  const nullValue = (alias: string): Node => ({ class: 'CONSTANT', type: 'VALUE_CONSTANT', ...at, alias, value: { type: { id: 'NULL', type_info: null }, is_null: true } });
  const nullTime = cast(nullValue(''), 'TIMESTAMP', false, 'time');
  const others = (src.emptyColumns ?? []).map(nullValue);
  return scan ?? buf ?? select([nullTime, ...others], EMPTY_FROM, cast(typed('VARCHAR', 'f'), 'BOOLEAN'));
}

/** Turns `ref.node` (a BASE_TABLE) into a subquery over `src`, keeping the name the query uses for it. */
export function replaceWithSource(ref: MeasurementRef, src: RefSource): void {
  replaceWithQuery(ref, sourceNode(src));
}

/** Turns `ref.node` (a BASE_TABLE) into the subquery `query`, keeping the name the query uses for it. */
export function replaceWithQuery(ref: MeasurementRef, query: Node): void {
  const n = ref.node;
  const replacement: Node = {
    type: 'SUBQUERY',
    alias: n.alias || n.table_name,
    sample: n.sample ?? null,
    query_location: n.query_location ?? 0,
    subquery: { node: query, named_param_map: [] },
    column_name_alias: n.column_name_alias ?? [],
  };
  for (const key of Object.keys(n)) delete n[key];
  Object.assign(n, replacement);
}

/** A tree selecting `TRY_CAST(<value> AS TIMESTAMP)` for each value, or null when there are none. */
export function boundsTree(values: readonly Node[]): SerializedSql | null {
  if (values.length === 0) return null;
  return { error: false, statements: [{ node: select(values.map((v) => cast(v, 'TIMESTAMP', true)), EMPTY_FROM), named_param_map: [] }] };
}

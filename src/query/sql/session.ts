/**
 * A wire-protocol session's view of one statement, applied to its syntax tree before the guard:
 * `$n` parameters become constants (typed when the client declared a type), and the functions
 * Postgres clients call about their session (version(), current_database(), current_setting(),
 * quote_ident(), ...) become constants or plain DuckDB expressions. Nothing here reads SQL text.
 */
import { invalid } from '../../lib/errors.ts';
import { isNode, type Node, type SerializedSql } from './tree.ts';

/** The session a statement runs in (the Postgres wire listener builds it). */
export interface QuerySession {
  user: string;
  /** The database bare names resolve in (`dbname`); it is also the session's schema. */
  database: string;
  /** What version() answers. */
  version: string;
  /** Settings current_setting() reads (lower-case names), e.g. server_version_num, search_path. */
  settings: ReadonlyMap<string, string>;
  backendPid: number;
}

/** One bound parameter: its text (null for SQL NULL) and the DuckDB type to cast it to (null: untyped literal). */
export interface BoundParam {
  text: string | null;
  type: string | null;
}

const at = { alias: '', query_location: 0 };
const constant = (id: string, value: unknown, alias = ''): Node => ({ class: 'CONSTANT', type: 'VALUE_CONSTANT', ...at, alias, value: { type: { id, type_info: null }, is_null: false, value } });
const nullConstant = (alias = ''): Node => ({ class: 'CONSTANT', type: 'VALUE_CONSTANT', ...at, alias, value: { type: { id: 'NULL', type_info: null }, is_null: true } });
const cast = (child: Node, id: string, alias = ''): Node => ({ class: 'CAST', type: 'OPERATOR_CAST', ...at, alias, child, cast_type: { id, type_info: null }, try_cast: false });
const call = (name: string, children: Node[], alias = ''): Node => ({
  class: 'FUNCTION', type: 'FUNCTION', ...at, alias, function_name: name, schema: '', catalog: '', children,
  filter: null, order_bys: { type: 'ORDER_MODIFIER', orders: [] }, distinct: false, is_operator: false, export_state: false,
});

/** Column references Postgres reads as session functions (`SELECT user`). */
const SESSION_COLUMNS = new Set(['user', 'current_user', 'session_user', 'current_role']);

/** Replaces parameters (always) and session functions (with a session) throughout `tree`, in place. */
export function bindSession(tree: SerializedSql, params: readonly BoundParam[], session: QuerySession | null): void {
  for (const st of tree.statements) {
    st.node = transform(st.node, params, session) as Node;
    st.named_param_map = [];
  }
}

function transform(v: unknown, params: readonly BoundParam[], s: QuerySession | null): unknown {
  if (Array.isArray(v)) return v.map((x) => transform(x, params, s));
  if (!isNode(v)) return v;
  // Children first: a replacement may carry its arguments, which are then already bound.
  for (const key in v) v[key] = key === 'select_list' ? (v[key] as unknown[]).map((x) => selectItem(x, params, s)) : transform(v[key], params, s);
  if (s && v.type === 'TABLE_FUNCTION') return tableFunction(v);
  return replacement(v, params, s) ?? v;
}

/** A select-list item; a replaced session function keeps its name as the column name (`version`, as Postgres). */
function selectItem(item: unknown, params: readonly BoundParam[], s: QuerySession | null): unknown {
  const n = isNode(item) ? item : null;
  const cols = n?.class === 'COLUMN_REF' ? (n.column_names as string[]) : null;
  const name = n?.class === 'FUNCTION' ? String(n.function_name) : cols?.length === 1 ? cols[0]! : null;
  const out = transform(item, params, s);
  if (out !== item && isNode(out) && !out.alias && name) out.alias = name.toLowerCase();
  return out;
}

/** Scalar functions Postgres clients call in FROM (a one-row, one-column relation named by the alias). */
const SCALARS_IN_FROM = new Set(['string_to_array', 'string_split', 'regexp_split_to_array', 'current_schemas']);

/**
 * Postgres names the column of a function in FROM after its alias (`generate_series(1,3) AS i`
 * gives column `i`), and allows scalar functions there; DuckDB does neither, so both are spelled out.
 */
function tableFunction(t: Node): Node {
  const alias = String(t.alias ?? '');
  const aliases = t.column_name_alias as string[];
  const fn = t.function as Node;
  if (!alias || aliases.length > 0) return t;
  if (!SCALARS_IN_FROM.has(String(fn.function_name).toLowerCase())) return { ...t, column_name_alias: [alias] };
  const select: Node = {
    type: 'SELECT_NODE', modifiers: [], cte_map: { map: [] }, select_list: [{ ...fn, alias }],
    from_table: { type: 'EMPTY', alias: '', sample: null, query_location: 0 }, where_clause: null, group_expressions: [], group_sets: [],
    aggregate_handling: 'STANDARD_HANDLING', having: null, sample: null, qualify: null,
  };
  return { type: 'SUBQUERY', alias, sample: null, query_location: 0, subquery: { node: select, named_param_map: [] }, column_name_alias: [] };
}

function replacement(n: Node, params: readonly BoundParam[], s: QuerySession | null): Node | null {
  const alias = String(n.alias ?? '');
  if (n.class === 'PARAMETER') {
    const i = Number(n.identifier) - 1;
    const p = params[i];
    if (!p) throw invalid(`no value bound for parameter $${i + 1} (${params.length} given)`);
    if (p.text === null) return p.type ? cast(nullConstant(), p.type, alias) : nullConstant(alias);
    const lit = constant('VARCHAR', p.text);
    return p.type ? cast(lit, p.type, alias) : { ...lit, alias };
  }
  if (!s) return null;
  if (n.class === 'COLUMN_REF') {
    const names = n.column_names as string[];
    return names.length === 1 && SESSION_COLUMNS.has(names[0]!.toLowerCase()) ? constant('VARCHAR', s.user, alias) : null;
  }
  if (n.class !== 'FUNCTION' || (n.catalog ?? '') !== '' || !['', 'pg_catalog'].includes(String(n.schema ?? '').toLowerCase())) return null;
  const name = String(n.function_name).toLowerCase();
  const args = n.children as Node[];
  const named = (value: Node): Node => ({ ...value, alias });
  switch (name) {
    case 'version':
      return named(constant('VARCHAR', s.version));
    case 'current_database':
    case 'current_catalog':
    case 'current_schema':
      return named(constant('VARCHAR', s.database));
    case 'current_schemas':
      return named(call('list_value', [constant('VARCHAR', s.database)]));
    case 'current_user':
    case 'session_user':
    case 'user':
      return named(constant('VARCHAR', s.user));
    case 'pg_backend_pid':
      return named(constant('INTEGER', s.backendPid));
    case 'pg_is_in_recovery':
      return named(cast(constant('VARCHAR', 'false'), 'BOOLEAN'));
    case 'current_setting': {
      const key = constArg(args[0], name).toLowerCase();
      const value = s.settings.get(key);
      if (value === undefined) throw invalid(`unrecognized configuration parameter "${key}"`);
      return named(constant('VARCHAR', value));
    }
    case 'set_config':
      return named(args[1] ?? nullConstant());
    case 'quote_ident':
      // Quoted unless a plain lower-case identifier, as Postgres does (keywords aside).
      return named({
        class: 'CASE', type: 'CASE_EXPR', ...at,
        case_checks: [{ when_expr: call('regexp_full_match', [args[0]!, constant('VARCHAR', '[a-z_][a-z0-9_$]*')]), then_expr: args[0]! }],
        else_expr: call('concat', [constant('VARCHAR', '"'), call('replace', [args[0]!, constant('VARCHAR', '"'), constant('VARCHAR', '""')]), constant('VARCHAR', '"')]),
      });
    case 'parse_ident':
      return named(call('string_split', [args[0]!, constant('VARCHAR', '.')]));
    case 'array_lower':
      return named(constant('INTEGER', 1));
    case 'array_upper':
      return named(call('array_length', args.slice(0, 2)));
    case 'has_table_privilege':
    case 'has_schema_privilege':
    case 'has_database_privilege':
    case 'pg_table_is_visible':
      return named(cast(constant('VARCHAR', 'true'), 'BOOLEAN'));
    case 'obj_description':
    case 'col_description':
    case 'pg_get_expr':
      return named(cast(nullConstant(), 'VARCHAR'));
    case 'pg_get_userbyid':
      return named(constant('VARCHAR', s.user));
    default:
      return null;
  }
}

function constArg(n: Node | undefined, fn: string): string {
  const v = n?.class === 'CONSTANT' ? (n.value as { value?: unknown }).value : undefined;
  if (typeof v !== 'string') throw invalid(`${fn}() takes a constant string`);
  return v;
}

/** The highest `$n` a parsed statement uses (0 without parameters). */
export function parameterCount(tree: SerializedSql): number {
  let max = 0;
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (!isNode(v)) return;
    if (v.class === 'PARAMETER') max = Math.max(max, Number(v.identifier) || 0);
    for (const key in v) visit(v[key]);
  };
  tree.statements.forEach((st) => visit(st.node));
  return max;
}

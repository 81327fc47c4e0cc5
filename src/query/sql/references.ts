/**
 * Finds every measurement a SELECT reads: each BASE_TABLE that is not a CTE in scope, with its
 * database (`db.m`, or the default database for a bare name) and the conditions on its `time`
 * column that the enclosing SELECT's WHERE imposes (AND-terms only), for file pruning.
 */
import { invalid } from '../../lib/errors.ts';
import { accessDenied, type TableAccess } from '../../lib/table-access.ts';
import { columnPath, conjuncts, cteEntries, isNode, isQueryNode, isTableRef, type Node, type SerializedSql } from './tree.ts';
import { CATALOG_SCHEMAS } from '../catalog-tables.ts';

/** One comparison of `time` with a constant expression. `op` reads as `time <op> value`. */
export interface TimeCondition {
  op: '=' | '<' | '<=' | '>' | '>=';
  /** The constant expression (a subtree of the query; evaluated by DuckDB). */
  value: Node;
  /** The value depends on the current time (now(), current_date, ...). */
  usesNow: boolean;
}

/** One table reference that reads a measurement. */
export interface MeasurementRef {
  /** The BASE_TABLE node itself; the rewrite replaces its fields in place. */
  node: Node;
  database: string;
  measurement: string;
  /** AND-ed conditions on this reference's `time`; empty when none could be extracted. */
  conditions: TimeCondition[];
  /** Set when the whole query is `SELECT <columns> FROM m ORDER BY time <dir> LIMIT n [OFFSET k]`. */
  topN?: { direction: 'asc' | 'desc'; rows: number };
}

const FLIP: Record<TimeCondition['op'], TimeCondition['op']> = { '=': '=', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };
const COMPARISONS: Record<string, TimeCondition['op']> = {
  COMPARE_EQUAL: '=',
  COMPARE_LESSTHAN: '<',
  COMPARE_LESSTHANOREQUALTO: '<=',
  COMPARE_GREATERTHAN: '>',
  COMPARE_GREATERTHANOREQUALTO: '>=',
};

/** Functions whose result depends only on their arguments (and the transaction's start time). */
const CONSTANT_FUNCTIONS = new Set([
  '+', '-', '*', 'now', 'current_timestamp', 'get_current_timestamp', 'transaction_timestamp', 'current_date', 'today',
  'to_timestamp', 'epoch_ms', 'make_timestamp', 'strptime', 'date_trunc', 'time_bucket', 'trunc', 'date_add', 'date_sub',
  'to_years', 'to_months', 'to_weeks', 'to_days', 'to_hours', 'to_minutes', 'to_seconds', 'to_milliseconds', 'to_microseconds',
]);

/**
 * Lists the measurement references of a guarded tree; bare names need `defaultDatabase`. Each one is
 * authorized here, where it is resolved (a CTE's own name is not a table): 403 unless `access` may read it.
 */
export function findMeasurementRefs(tree: SerializedSql, defaultDatabase: string | undefined, access: TableAccess): MeasurementRef[] {
  const refs: MeasurementRef[] = [];
  const conditionsOf = new Map<Node, TimeCondition[]>();
  const visit = (v: unknown, scope: ReadonlySet<string>): void => {
    if (Array.isArray(v)) return v.forEach((x) => visit(x, scope));
    if (!isNode(v)) return;
    if (isQueryNode(v)) return visitQuery(v, scope);
    if (isTableRef(v) && v.type === 'BASE_TABLE') {
      const table = String(v.table_name);
      const schema = String(v.schema_name ?? '');
      if (schema === '' && scope.has(table.toLowerCase())) return;
      const database = schema || defaultDatabase;
      if (!database) throw invalid(`cannot resolve table '${table}': write <database>.${table} or send the x-svc-database header`);
      // The Postgres catalog schemas are answered from what the caller may read (catalog-tables.ts).
      const catalog = schema !== '' && CATALOG_SCHEMAS.has(database.toLowerCase());
      if (!catalog && !access.allows('read', database, table)) throw accessDenied('read', database, table);
      refs.push({ node: v, database, measurement: table, conditions: conditionsOf.get(v) ?? [] });
      return;
    }
    for (const key in v) visit(v[key], scope);
  };
  const visitQuery = (q: Node, outer: ReadonlySet<string>): void => {
    const ctes = cteEntries(q);
    const scope = new Set(outer);
    for (const cte of ctes) {
      // A CTE sees the ones before it (and itself, when recursive: RECURSIVE_CTE_NODE names it).
      const inner = new Set(scope);
      const body = (cte.value.query as Node | undefined)?.node as Node | undefined;
      if (body?.type === 'RECURSIVE_CTE_NODE') inner.add(cte.name.toLowerCase());
      visit(cte.value, inner);
      scope.add(cte.name.toLowerCase());
    }
    if (q.type === 'SELECT_NODE') collectConditions(q, conditionsOf);
    for (const key in q) if (key !== 'cte_map') visit(q[key], scope);
  };
  visit(tree.statements[0]!.node, new Set());
  const top = topNShape(tree.statements[0]!.node);
  if (top && refs.length === 1 && refs[0]!.node === top.table) refs[0]!.topN = { direction: top.direction, rows: top.rows };
  return refs;
}

/** Records, for each BASE_TABLE directly in `select`'s FROM, the WHERE terms that bound its time. */
function collectConditions(select: Node, out: Map<Node, TimeCondition[]>): void {
  const tables = fromTables(select.from_table);
  if (tables === null || tables.length === 0) return;
  const terms = conjuncts(select.where_clause);
  for (const t of tables) {
    const names = new Set([String(t.alias || t.table_name).toLowerCase()]);
    const matches = (expr: unknown) => {
      const p = columnPath(expr);
      if (!p) return false;
      if (p.length === 1) return p[0] === 'time' && tables.length === 1;
      return p.length === 2 && p[1] === 'time' && names.has(p[0]!);
    };
    const conds: TimeCondition[] = [];
    for (const term of terms) {
      const op = COMPARISONS[String(term.type)];
      if (term.class === 'COMPARISON' && op) {
        if (matches(term.left) && isConstant(term.right)) conds.push({ op, value: term.right as Node, usesNow: usesNow(term.right) });
        else if (matches(term.right) && isConstant(term.left)) conds.push({ op: FLIP[op], value: term.left as Node, usesNow: usesNow(term.left) });
      } else if (term.class === 'BETWEEN' && matches(term.input) && isConstant(term.lower) && isConstant(term.upper)) {
        conds.push({ op: '>=', value: term.lower as Node, usesNow: usesNow(term.lower) }, { op: '<=', value: term.upper as Node, usesNow: usesNow(term.upper) });
      }
    }
    if (conds.length > 0) out.set(t, conds);
  }
}

/**
 * The table refs of a FROM clause reachable through joins whose WHERE filters may prune rows;
 * null when the FROM holds a join kind where dropping rows of one side changes the other's result.
 */
function fromTables(from: unknown): Node[] | null {
  if (!isNode(from)) return [];
  if (from.type === 'BASE_TABLE') return [from];
  if (from.type !== 'JOIN') return from.type === 'EMPTY' ? [] : [from];
  if (!['REGULAR', 'CROSS', 'NATURAL'].includes(String(from.ref_type))) return null;
  if (!['INNER', 'LEFT', 'RIGHT', 'OUTER'].includes(String(from.join_type))) return null;
  const l = fromTables(from.left);
  const r = fromTables(from.right);
  return l && r ? [...l, ...r] : null;
}

const NOW_FUNCTIONS = new Set(['now', 'current_timestamp', 'get_current_timestamp', 'transaction_timestamp', 'current_date', 'today']);

/** True when a constant expression reads the clock. */
function usesNow(e: unknown): boolean {
  if (!isNode(e)) return false;
  if (e.class === 'FUNCTION' && NOW_FUNCTIONS.has(String(e.function_name).toLowerCase())) return true;
  return Object.values(e).some((v) => (Array.isArray(v) ? v.some(usesNow) : usesNow(v)));
}

/** True for an expression DuckDB can evaluate on its own: literals, casts and time arithmetic. */
function isConstant(e: unknown): boolean {
  if (!isNode(e)) return false;
  switch (e.class) {
    case 'CONSTANT':
      return true;
    case 'CAST':
      return isConstant(e.child);
    case 'FUNCTION':
      return CONSTANT_FUNCTIONS.has(String(e.function_name).toLowerCase()) && e.filter === null && !e.distinct && (e.children as unknown[]).every(isConstant);
    default:
      return false;
  }
}

/** Recognises `SELECT <plain columns> FROM <table> ORDER BY time [ASC|DESC] LIMIT n [OFFSET k]` with nothing else. */
function topNShape(q: Node): { table: Node; direction: 'asc' | 'desc'; rows: number } | null {
  if (q.type !== 'SELECT_NODE' || cteEntries(q).length > 0) return null;
  if (q.where_clause || q.having || q.qualify || q.sample || (q.group_expressions as unknown[]).length || (q.group_sets as unknown[]).length) return null;
  const from = q.from_table as Node;
  if (from.type !== 'BASE_TABLE' || from.sample) return null;
  // No aliases: ORDER BY time would bind to a select-list alias named time before the column.
  const plain = (e: Node): boolean =>
    !e.alias && (e.class === 'COLUMN_REF' || (e.class === 'STAR' && !e.expr && !e.columns) || (e.class === 'CAST' && plain(e.child as Node)));
  if (!(q.select_list as Node[]).every(plain)) return null;
  const mods = q.modifiers as Node[];
  if (mods.length !== 2 || mods[0]!.type !== 'ORDER_MODIFIER' || mods[1]!.type !== 'LIMIT_MODIFIER') return null;
  const orders = mods[0]!.orders as Node[];
  const p = orders.length === 1 ? columnPath(orders[0]!.expression) : null;
  if (!p || p[p.length - 1] !== 'time') return null;
  const intOf = (e: unknown): number | null => {
    if (e === null || e === undefined) return 0;
    const v = isNode(e) && e.class === 'CONSTANT' ? (e.value as { value?: unknown }).value : null;
    return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null;
  };
  const limit = intOf(mods[1]!.limit);
  const offset = intOf(mods[1]!.offset);
  if (limit === null || offset === null || !mods[1]!.limit) return null;
  const dir = orders[0]!.type === 'DESCENDING' ? 'desc' : orders[0]!.type === 'ASCENDING' || orders[0]!.type === 'ORDER_DEFAULT' ? 'asc' : null;
  return dir ? { table: from, direction: dir, rows: limit + offset } : null;
}

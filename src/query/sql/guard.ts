/**
 * The guard: walks the whole syntax tree of one SELECT and refuses anything that could reach
 * outside the measurements: table functions (except a few pure generators), replacement scans of
 * quoted paths, settings and variable access, prepared parameters, time travel. Unknown node kinds
 * are refused too, so a DuckDB upgrade adding syntax fails closed. DuckDB's sandbox is the second wall.
 */
import { invalid } from '../../lib/errors.ts';
import { isNode, isQueryNode, isTableRef, type Node, type SerializedSql } from './tree.ts';

/** Table functions that generate values and touch nothing else. */
const ALLOWED_TABLE_FUNCTIONS = new Set(['range', 'generate_series', 'unnest']);

/** Scalar functions that read configuration or state outside the query, or write logs. */
const REFUSED_FUNCTIONS = new Set([
  'current_setting',
  'getvariable',
  'getenv',
  'setseed',
  'write_log',
  'json_execute_serialized_sql',
  'json_serialize_sql',
  'json_deserialize_sql',
  'current_query',
  'nextval',
  'currval',
  'which_secret',
  'parse_duckdb_log_message',
]);

const TABLE_REF_TYPES = new Set(['BASE_TABLE', 'JOIN', 'SUBQUERY', 'TABLE_FUNCTION', 'EMPTY', 'EXPRESSION_LIST', 'PIVOT']);

const EXPRESSION_CLASSES = new Set([
  'CONSTANT',
  'COLUMN_REF',
  'FUNCTION',
  'CAST',
  'COMPARISON',
  'CONJUNCTION',
  'OPERATOR',
  'CASE',
  'BETWEEN',
  'SUBQUERY',
  'WINDOW',
  'STAR',
  'COLLATE',
  'LAMBDA',
  'LAMBDA_REF',
  'POSITIONAL_REFERENCE',
]);

/** Schemas a function may be qualified with (DuckDB itself qualifies some, e.g. `main.list_value`). */
const FUNCTION_SCHEMAS = new Set(['', 'main', 'pg_catalog']);

/** A measurement or database name as the spec allows it (anything else would be a path or a trick). */
export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** Throws a 400 unless `tree` is exactly one SELECT made only of allowed parts. */
export function guardTree(tree: SerializedSql): void {
  if (tree.statements.length !== 1) throw invalid(`only one statement per query is allowed, got ${tree.statements.length}`);
  if ((tree.statements[0]!.named_param_map ?? []).length > 0) throw invalid('query parameters ($1, ?) are not supported: write the values into the SQL');
  visit(tree.statements[0]!.node);
}

function visit(v: unknown): void {
  if (Array.isArray(v)) {
    for (const x of v) visit(x);
    return;
  }
  if (!isNode(v)) return;
  if (typeof v.class === 'string') checkExpression(v);
  else if (isQueryNode(v)) {
    /* query nodes are containers; their parts are checked below */
  } else if (isTableRef(v)) checkTableRef(v);
  else if (typeof v.type === 'string' && v.type.endsWith('_NODE')) throw invalid(`unsupported query construct: ${v.type}`);
  for (const key in v) visit(v[key]);
}

function checkExpression(e: Node): void {
  const cls = e.class as string;
  if (cls === 'PARAMETER') throw invalid('query parameters ($1, ?) are not supported: write the values into the SQL');
  if (!EXPRESSION_CLASSES.has(cls)) throw invalid(`unsupported expression: ${cls}`);
  if (cls !== 'FUNCTION') return;
  const name = String(e.function_name).toLowerCase();
  if (REFUSED_FUNCTIONS.has(name)) throw invalid(`function ${name}() is not allowed in queries`);
  if ((e.catalog ?? '') !== '' || !FUNCTION_SCHEMAS.has(String(e.schema ?? '').toLowerCase()))
    throw invalid(`function ${String(e.catalog || e.schema)}.${name}() is not allowed in queries`);
}

function checkTableRef(t: Node): void {
  const type = t.type as string;
  if (!TABLE_REF_TYPES.has(type)) throw invalid(`unsupported table reference: ${type}`);
  if (type === 'TABLE_FUNCTION') {
    const fn = t.function as Node;
    const name = String(fn.function_name).toLowerCase();
    if (!ALLOWED_TABLE_FUNCTIONS.has(name) || (fn.schema ?? '') !== '' || (fn.catalog ?? '') !== '')
      throw invalid(`table function ${name}() is not allowed in queries: read measurements as <database>.<measurement>`);
    return;
  }
  if (type !== 'BASE_TABLE') return;
  const table = String(t.table_name);
  const schema = String(t.schema_name ?? '');
  if (t.at_clause !== null && t.at_clause !== undefined) throw invalid('AT (time travel) clauses are not supported');
  if ((t.catalog_name ?? '') !== '') throw invalid(`cannot read ${t.catalog_name}.${schema}.${table}: address tables as <database>.<measurement>`);
  if (!IDENTIFIER.test(table) || (schema !== '' && !IDENTIFIER.test(schema)))
    throw invalid(`cannot read '${schema ? `${schema}.` : ''}${table}': files and URLs cannot be queried, only measurements (<database>.<measurement>)`);
  if (table.toLowerCase().startsWith('__svc') || schema.toLowerCase().startsWith('__svc')) throw invalid(`names starting with __svc are reserved: ${table}`);
}

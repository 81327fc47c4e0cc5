/**
 * DuckDB's JSON syntax tree (`json_serialize_sql`) as plain objects, plus the two conversions that
 * must not lose information: integers beyond 2^53 (a BIGINT literal, a query location) are carried
 * as marked strings while the tree is in JS and turned back into bare digits on the way out.
 */

/** Any node of the tree. Field sets differ per node kind; code checks `class` / `type` first. */
export type Node = { [key: string]: unknown };

/** A parsed statement list as DuckDB serializes it. */
export interface SerializedSql {
  error: boolean;
  error_type?: string;
  error_message?: string;
  statements: { node: Node; named_param_map?: unknown[] }[];
}

const MARK = '\u0001svcint:';

/** Parses DuckDB's JSON, keeping integer tokens longer than 15 digits exact (as marked strings). */
export function parseTreeJson(text: string): SerializedSql {
  let out = '';
  let last = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92) i++;
      else if (ch === 34) inString = false;
      continue;
    }
    if (ch === 34) {
      inString = true;
      continue;
    }
    if (ch === 45 || (ch >= 48 && ch <= 57)) {
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
      const next = text.charCodeAt(j);
      const integer = next !== 46 && next !== 101 && next !== 69;
      if (integer && j - i > 15) {
        out += text.slice(last, i) + JSON.stringify(MARK + text.slice(i, j));
        last = j;
      }
      i = j - 1;
    }
  }
  return JSON.parse(out + text.slice(last)) as SerializedSql;
}

/** Serializes a tree for `json_deserialize_sql`, restoring marked integers as bare digits. */
export function treeJson(tree: SerializedSql): string {
  const text = JSON.stringify(tree);
  return text.includes('\\u0001svcint:') ? text.replace(/"\\u0001svcint:(-?\d+)"/g, '$1') : text;
}

/** True for an object node. */
export function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Query node kinds (the body of a SELECT, a set operation, a recursive CTE). */
export const QUERY_NODE_TYPES = new Set(['SELECT_NODE', 'SET_OPERATION_NODE', 'RECURSIVE_CTE_NODE', 'CTE_NODE']);

/** True for a query node (has `cte_map`). */
export function isQueryNode(n: Node): boolean {
  return typeof n.type === 'string' && QUERY_NODE_TYPES.has(n.type) && n.class === undefined;
}

/** True for a table reference (FROM item): has a `type` but no expression `class`. */
export function isTableRef(n: Node): boolean {
  return typeof n.type === 'string' && n.class === undefined && !QUERY_NODE_TYPES.has(n.type) && 'alias' in n && 'query_location' in n;
}

/** Names of the CTEs a query node defines, in order. */
export function cteEntries(n: Node): { name: string; value: Node }[] {
  const map = (n.cte_map as { map?: { key: string; value: Node }[] } | undefined)?.map ?? [];
  return map.map((e) => ({ name: e.key, value: e.value }));
}

/** Flattens an AND conjunction into its terms (a non-AND expression is one term). */
export function conjuncts(expr: unknown): Node[] {
  if (!isNode(expr)) return [];
  if (expr.class === 'CONJUNCTION' && expr.type === 'CONJUNCTION_AND') return (expr.children as Node[]).flatMap(conjuncts);
  return [expr];
}

/** The column path of a COLUMN_REF, lower-cased (identifiers are case-insensitive in DuckDB). */
export function columnPath(expr: unknown): string[] | null {
  if (!isNode(expr) || expr.class !== 'COLUMN_REF') return null;
  return (expr.column_names as string[]).map((s) => s.toLowerCase());
}

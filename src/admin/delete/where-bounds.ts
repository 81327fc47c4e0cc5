/**
 * Time bounds implied by a checked delete condition, so files whose time range cannot match are not
 * opened: top-level AND-ed comparisons of `time` with a string constant (`time < '2024-01-01'`,
 * `time BETWEEN '...' AND '...'`). The constants are read by DuckDB itself (TRY_CAST to TIMESTAMP), so
 * they mean what they mean in the condition. Strict comparisons are widened to inclusive ones (a file
 * ending exactly at the bound is read, never skipped); anything else leaves the bound open.
 */
import type { DuckDBConnection } from '../../duckdb/index.ts';

type Node = { [key: string]: unknown };
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Inclusive epoch-µs bounds; undefined = open. */
export interface TimeBounds {
  minTime?: number;
  maxTime?: number;
}

const FLIP: Record<string, string> = {
  COMPARE_LESSTHAN: 'COMPARE_GREATERTHAN',
  COMPARE_LESSTHANOREQUALTO: 'COMPARE_GREATERTHANOREQUALTO',
  COMPARE_GREATERTHAN: 'COMPARE_LESSTHAN',
  COMPARE_GREATERTHANOREQUALTO: 'COMPARE_LESSTHANOREQUALTO',
  COMPARE_EQUAL: 'COMPARE_EQUAL',
};

const isTime = (n: unknown) => isNode(n) && n.class === 'COLUMN_REF' && (n.column_names as string[]).join('.').toLowerCase() === 'time';
const text = (n: unknown): string | null => {
  if (!isNode(n) || n.class !== 'CONSTANT') return null;
  const v = n.value as { is_null?: boolean; value?: unknown } | undefined;
  return !v?.is_null && typeof v?.value === 'string' ? v.value : null;
};

/** `time <op> '<text>'` terms of the top-level AND. */
function terms(expr: Node): { op: string; value: string }[] {
  if (expr.class === 'CONJUNCTION' && expr.type === 'CONJUNCTION_AND') return (expr.children as Node[]).flatMap(terms);
  if (expr.class === 'BETWEEN' && isTime(expr.input)) {
    const lo = text(expr.lower);
    const hi = text(expr.upper);
    return [...(lo ? [{ op: 'COMPARE_GREATERTHANOREQUALTO', value: lo }] : []), ...(hi ? [{ op: 'COMPARE_LESSTHANOREQUALTO', value: hi }] : [])];
  }
  if (expr.class !== 'COMPARISON' || !FLIP[String(expr.type)]) return [];
  if (isTime(expr.left) && text(expr.right) !== null) return [{ op: String(expr.type), value: text(expr.right)! }];
  if (isTime(expr.right) && text(expr.left) !== null) return [{ op: FLIP[String(expr.type)]!, value: text(expr.left)! }];
  return [];
}

/** The bounds of `expr` (a checked WHERE tree). */
export async function timeBounds(conn: DuckDBConnection, expr: Node): Promise<TimeBounds> {
  const b: TimeBounds = {};
  for (const t of terms(expr)) {
    const r = await conn.runAndReadAll('SELECT epoch_us(TRY_CAST($1::VARCHAR AS TIMESTAMP))::DOUBLE', [t.value]);
    const us = r.getRows()[0]?.[0];
    if (typeof us !== 'number' || !Number.isFinite(us)) continue;
    if (t.op !== 'COMPARE_LESSTHAN' && t.op !== 'COMPARE_LESSTHANOREQUALTO') b.minTime = Math.max(b.minTime ?? -Infinity, us);
    if (t.op !== 'COMPARE_GREATERTHAN' && t.op !== 'COMPARE_GREATERTHANOREQUALTO') b.maxTime = Math.min(b.maxTime ?? Infinity, us);
  }
  return b;
}

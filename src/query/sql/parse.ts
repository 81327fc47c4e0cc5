/**
 * DuckDB's own parser, both ways: SQL text -> syntax tree (`json_serialize_sql`) and tree -> SQL
 * (`json_deserialize_sql`). Anything that is not a SELECT fails to serialize and is refused here.
 */
import type { DuckDBConnection } from '../../duckdb/index.ts';
import { invalid } from '../../lib/errors.ts';
import { parseTreeJson, type SerializedSql } from './tree.ts';
import { setBounded } from '../../lib/bounded-map.ts';

/** Serialized trees of recent queries (dashboards repeat theirs): the text, parsed afresh per use. */
const recent = new Map<string, string>();
const RECENT_MAX = 256;
const RECENT_MAX_SQL = 16_384;

/** Parses one query into DuckDB's syntax tree; 400 with the engine's message on a syntax error or a non-SELECT. */
export async function parseSql(conn: DuckDBConnection, sql: string): Promise<SerializedSql> {
  const cached = recent.get(sql);
  if (cached !== undefined) {
    // Re-inserted: the map's order is the eviction order.
    recent.delete(sql);
    recent.set(sql, cached);
    return parseTreeJson(cached);
  }
  const reader = await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
  const text = String(reader.getRows()[0]![0]);
  const tree = parseTreeJson(text);
  if (tree.error) {
    const msg = tree.error_message ?? 'unknown parser error';
    if (tree.error_type === 'not implemented' || /Only SELECT statements/i.test(msg))
      throw invalid('only SELECT queries are allowed: the query API is read-only (INSERT, UPDATE, DELETE, CREATE, DROP, COPY, ATTACH, SET, PRAGMA, ... are refused)');
    throw invalid(`Parser Error: ${msg}`);
  }
  if (tree.statements.length === 0) throw invalid('empty query: send one SELECT statement');
  if (sql.length > RECENT_MAX_SQL) return tree;
  setBounded(recent, sql, text, RECENT_MAX);
  return tree;
}

/**
 * DuckDB's own parser, both ways: SQL text -> syntax tree (`json_serialize_sql`) and tree -> SQL
 * (`json_deserialize_sql`). Anything that is not a SELECT fails to serialize and is refused here.
 */
import type { DuckDBConnection } from '../../duckdb/index.ts';
import { invalid } from '../../lib/errors.ts';
import { parseTreeJson, type SerializedSql } from './tree.ts';

/** Parses one query into DuckDB's syntax tree; 400 with the engine's message on a syntax error or a non-SELECT. */
export async function parseSql(conn: DuckDBConnection, sql: string): Promise<SerializedSql> {
  const reader = await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
  const tree = parseTreeJson(String(reader.getRows()[0]![0]));
  if (tree.error) {
    const msg = tree.error_message ?? 'unknown parser error';
    if (tree.error_type === 'not implemented' || /Only SELECT statements/i.test(msg))
      throw invalid('only SELECT queries are allowed: the query API is read-only (INSERT, UPDATE, DELETE, CREATE, DROP, COPY, ATTACH, SET, PRAGMA, ... are refused)');
    throw invalid(`Parser Error: ${msg}`);
  }
  if (tree.statements.length === 0) throw invalid('empty query: send one SELECT statement');
  return tree;
}

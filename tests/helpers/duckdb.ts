/**
 * An in-memory DuckDB connection for the tests of one file: opened when the file loads, closed with
 * its instance after its last test.
 */
import { afterAll } from 'bun:test';
import { DuckDBInstance, type DuckDBConnection } from '../../src/duckdb/index.ts';

export async function memoryConnection(): Promise<DuckDBConnection> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  afterAll(() => {
    conn.closeSync();
    db.closeSync();
  });
  return conn;
}

/**
 * The only importer of @duckdb/node-api. Everything else asks this folder for instances and
 * connections, so how the native addon is loaded (node_modules or embedded in the executable)
 * is decided in one place.
 */
import { DuckDBInstance } from '@duckdb/node-api';

export {
  DuckDBInstance,
  DuckDBConnection,
  DuckDBAppender,
  DuckDBDataChunk,
  DuckDBTableFunction,
  DuckDBPreparedStatement,
  DuckDBResult,
  DuckDBMaterializedResult,
  DuckDBTypeId,
  type DuckDBType,
  DuckDBTimestampValue,
  DuckDBDecimalValue,
  JsonDuckDBValueConverter,
  type Json,
  DOUBLE,
  BIGINT,
  INTEGER,
  BOOLEAN,
  VARCHAR,
  TIMESTAMP,
  ENUM,
} from '@duckdb/node-api';

export { nativeLoadInfo, type NativeLoadInfo } from './native-loader.ts';
export { createSandboxedInstance, type SandboxOptions } from './sandbox.ts';
export { ConnectionPool } from './connection-pool.ts';
export { chunkVector, copyIntoVector, setVectorValidity, setVectorString, type VectorHandle } from './chunk-writer.ts';
export { resultChunks, nativeResultsEnabled, STRING_SLACK, type ResultChunk, type ResultChunks } from './result-chunks.ts';
export { isValid, stringBytes, stringLength, longStrings, type RawVector, type LongStrings } from './raw-vector.ts';

/**
 * Proves the native engine loaded and answers: runs SELECT 42 on `instance` (a throwaway in-memory
 * one when omitted) and throws unless the answer is 42. main.ts gates /ready on it.
 */
export async function selfCheck(instance?: DuckDBInstance): Promise<void> {
  const db = instance ?? (await DuckDBInstance.create(':memory:'));
  const conn = await db.connect();
  try {
    const answer = (await conn.runAndReadAll('SELECT 42 AS answer')).getRows()[0]?.[0];
    if (answer !== 42) throw new Error(`cannot verify DuckDB: SELECT 42 returned ${String(answer)}`);
  } finally {
    conn.closeSync();
    if (!instance) db.closeSync();
  }
}

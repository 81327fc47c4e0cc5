/**
 * DuckDB itself reading an Arrow IPC stream: DuckDB-WASM (its Arrow IPC reader is Arrow C++, a strict
 * one), since the native Node client has no IPC reader and no Python DuckDB is reachable here.
 */
import * as duckdb from '@duckdb/duckdb-wasm/dist/duckdb-node-blocking';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

let db: Promise<duckdb.DuckDBBindings> | null = null;

function instance(): Promise<duckdb.DuckDBBindings> {
  return (db ??= (async () => {
    const dist = dirname(createRequire(import.meta.url).resolve('@duckdb/duckdb-wasm/dist/duckdb-node-blocking.cjs'));
    const bundles = {
      mvp: { mainModule: join(dist, 'duckdb-mvp.wasm'), mainWorker: join(dist, 'duckdb-node-mvp.worker.cjs') },
      eh: { mainModule: join(dist, 'duckdb-eh.wasm'), mainWorker: join(dist, 'duckdb-node-eh.worker.cjs') },
    };
    const d = await duckdb.createDuckDB(bundles, new duckdb.VoidLogger(), duckdb.NODE_RUNTIME);
    await d.instantiate(() => {});
    return d;
  })());
}

let tables = 0;

/** Loads `ipc` into DuckDB as table `t` and returns the rows of `sql` (which reads `t`) as plain objects. */
export async function queryArrowWithDuckDB(ipc: Uint8Array, sql: string): Promise<Record<string, unknown>[]> {
  const conn = (await instance()).connect();
  try {
    const name = `arrow_${tables++}`;
    conn.insertArrowFromIPCStream(ipc, { name });
    return conn
      .query(sql.replaceAll(/\bt\b/g, name))
      .toArray()
      .map((r: { toJSON(): Record<string, unknown> }) => r.toJSON());
  } finally {
    conn.close();
  }
}

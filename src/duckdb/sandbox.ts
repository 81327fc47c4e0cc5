/**
 * The query engine's DuckDB instance, locked down as a second wall behind the SQL guard: no file or
 * network access outside the storage root, no extension loading, and a configuration that a query
 * can no longer change once set up.
 */
import { DuckDBInstance } from '@duckdb/node-api';

/** How the locked-down instance is sized and where it may read. */
export interface SandboxOptions {
  /** Folders queries may read (the storage root); everything else is refused by DuckDB itself. */
  allowedDirectories: readonly string[];
  /** Where DuckDB spills when a query outgrows memory (also allowed); DuckDB's default when omitted. */
  tempDirectory?: string;
  /** DuckDB `memory_limit` in bytes (0 or omitted: DuckDB default). */
  memoryLimitBytes?: number;
  /** DuckDB worker threads (0 or omitted: number of cores). */
  threads?: number;
}

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Creates an in-memory DuckDB instance with external access off except `allowedDirectories`, then locks its configuration. */
export async function createSandboxedInstance(opts: SandboxOptions): Promise<DuckDBInstance> {
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  });
  const conn = await instance.connect();
  try {
    const dirs = opts.allowedDirectories.map((d) => quote(d.endsWith('/') ? d : `${d}/`));
    const settings = [
      `SET allowed_directories = [${dirs.join(', ')}]`,
      opts.tempDirectory ? `SET temp_directory = ${quote(opts.tempDirectory)}` : '',
      opts.memoryLimitBytes ? `SET memory_limit = '${Math.floor(opts.memoryLimitBytes)}B'` : '',
      opts.threads ? `SET threads = ${Math.floor(opts.threads)}` : '',
      // Data files are immutable (a rewrite gets a new name), so cached footers never go stale.
      'SET parquet_metadata_cache = true',
      // Order matters: allowed_directories must be set while external access is still on.
      'SET enable_external_access = false',
      'SET allow_community_extensions = false',
      'SET lock_configuration = true',
    ];
    for (const s of settings) if (s) await conn.run(s);
  } finally {
    conn.closeSync();
  }
  return instance;
}

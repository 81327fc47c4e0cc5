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
      // GLOBAL: a plain SET of this one stays with the setup connection, and queries run on others.
      'SET GLOBAL parquet_metadata_cache = true',
      // Rows of a query without ORDER BY may come in any order (standard SQL): keeping the scan order
      // made DuckDB run a LIMIT over files on one thread (SELECT * LIMIT 1M: 141-167 ms, now 54-68 ms).
      'SET GLOBAL preserve_insertion_order = false',
      // Cached footers and bytes are trusted without a stat per file per query (over half a millisecond
      // on two dozen files). Safe only because no key ever gets new content: every writer, restore too,
      // puts a new file under a new key (see storage/keys.ts), so a cached path always means the same bytes.
      "SET GLOBAL validate_external_file_cache = 'NO_VALIDATION'",
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

/**
 * The rooms of the house (../shared/DESIGN.md) and the one way imports flow between them, written
 * once: tests/architecture.test.ts derives every import rule from these lists. Adding a room is one
 * line here, in the same commit that creates its folder.
 */

/**
 * Top-level folders of src/, lowest first; a folder may import only folders listed before it, and
 * only through their index.ts (lib/ excepted: each of its files is its own public face).
 * native/ sits low because duckdb/ reads results through compiled C; duckdb/ sits below parquet/ and
 * buffer/ because the Parquet writer is DuckDB. console/ serves the web console; its page/ is browser code. tiering/ (hot -> cold moves) sits over admin/: its runs go through the admin scheduler. Nested rooms (auth/rbac, storage/tiering, the admin
 * features) live inside their parent's rank.
 */
export const LAYERS = [
  'lib',
  'observability',
  'config',
  'native',
  'catalog',
  'duckdb',
  'storage',
  'ingest',
  'wal',
  'parquet',
  'buffer',
  'query',
  'auth',
  'admin',
  'tiering',
  'governance',
  'audit',
  'cluster',
  'pgwire',
  'http',
  'console',
  'memory',
  'cli',
  'main.ts',
] as const;

/** A top-level room. */
export type Layer = (typeof LAYERS)[number];

/** Rooms inside a layer that DESIGN.md names; they follow their parent's rank. */
export const NESTED_ROOMS = ['auth/rbac', 'storage/tiering', 'storage/local', 'storage/s3', 'storage/azure', 'memory/http'] as const;

/** Rooms that must be able to ship alone, and the only rooms they may import. */
export const SELF_CONTAINED: Partial<Record<Layer, readonly Layer[]>> = {
  memory: ['lib', 'observability', 'config'],
};

/** Third-party packages (prefix before `/`, or the whole specifier) and the only places under src/ that may import them. */
export const PACKAGE_HOMES: Record<string, readonly string[]> = {
  '@duckdb': ['duckdb/'],
  hono: ['http/', 'memory/http/', 'memory/index.ts', 'console/'],
  uplot: ['console/page/'],
  'bun:sqlite': ['catalog/', 'memory/'],
  mqtt: ['admin/mqtt/'],
  croner: ['admin/cron.ts'],
  '@aws-sdk': ['storage/s3/'],
  '@azure': ['storage/azure/'],
  'hyparquet-writer': ['parquet/'],
  snappyjs: ['ingest/prom/'],
  '@modelcontextprotocol': ['memory/mcp/'],
};

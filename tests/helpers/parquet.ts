/** Reads the Parquet files a test server wrote, straight from its data folder with DuckDB (no query API). */
import { join } from 'node:path';
import { DuckDBInstance } from '../../src/duckdb/index.ts';

let instance: Promise<DuckDBInstance> | null = null;

/** Relative paths of the data files under `<dir>/data/svc` (the default storage.local_path), sorted. */
export function dataFiles(dir: string, root = 'data/svc'): string[] {
  return [...new Bun.Glob('**/*.parquet').scanSync(join(dir, root))].filter((f) => !f.startsWith('.tmp')).sort();
}

/** Runs `sql` where `$files(glob)` stands for read_parquet over matching files of the server's data folder. */
export async function queryFiles(dir: string, sql: string, root = 'data/svc'): Promise<Record<string, unknown>[]> {
  const db = await (instance ??= DuckDBInstance.create(':memory:'));
  const conn = await db.connect();
  try {
    const text = sql.replace(/\$files\(([^)]*)\)/g, (_, g: string) => `read_parquet('${join(dir, root, g.trim())}', union_by_name = true)`);
    return (await conn.runAndReadAll(text)).getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    conn.closeSync();
  }
}

/** Polls until `check` returns true (or throws after `timeoutMs`). */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

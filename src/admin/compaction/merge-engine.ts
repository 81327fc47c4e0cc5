/**
 * A DuckDB instance per merge, sized by `compaction.memory_limit` and `compaction.threads` (DuckDB's
 * memory limit is per instance, so separate instances keep each merge inside its own budget), spilling
 * to its own folder under `compaction.temp_directory`.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '../../duckdb/index.ts';
import type { CompactionSettings } from './compaction-settings.ts';

/** The folder compaction owns inside `temp_directory` (only it is ever emptied). */
export const spillRoot = (tempDirectory: string) => join(resolve(tempDirectory), 'svc-compaction-spill');

/** Runs `fn` on a connection of a fresh DuckDB instance with the merge limits; cleans up after. */
export async function withMergeEngine<T>(settings: CompactionSettings, id: string, fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  const spill = join(spillRoot(settings.tempDirectory), id);
  await mkdir(spill, { recursive: true });
  const instance = await DuckDBInstance.create(':memory:', {
    memory_limit: `${settings.memoryLimitBytes}B`,
    threads: String(settings.threads),
    temp_directory: spill,
    // Sorting is explicit (ORDER BY time); not preserving scan order lets DuckDB stream more.
    preserve_insertion_order: 'false',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  });
  const conn = await instance.connect();
  try {
    return await fn(conn);
  } finally {
    conn.closeSync();
    instance.closeSync();
    await rm(spill, { recursive: true, force: true }).catch(() => undefined);
  }
}

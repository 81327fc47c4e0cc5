import { expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileManifestStore, migrations, openCatalog } from '../catalog/index.ts';
import { DuckDBInstance } from '../duckdb/index.ts';
import { Logger } from '../observability/index.ts';
import { LocalObjectStore } from '../storage/index.ts';
import { reconcileManifest } from './index.ts';

test('unregistered files left by a crash: dropped when the WAL replays them, registered when they are the only copy', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-reconcile-'));
  const store = await new LocalObjectStore(join(dir, 'data')).open();
  const manifest = new FileManifestStore(openCatalog(join(dir, 'svc.db'), migrations));
  const duck = await DuckDBInstance.create(':memory:');
  const conn = await duck.connect();
  const covered = 'db/m/2024/01/01/00/m_20240101_000000_000000001.parquet';
  const uncovered = 'db/m/2024/01/01/00/m_20240101_000000_000000002.parquet';
  for (const key of [covered, uncovered]) {
    const tmp = store.scratchPath('x.parquet');
    await conn.run(`COPY (SELECT TIMESTAMP '2024-01-01 00:10:00' AS time, 1.0 AS v) TO '${tmp}' (FORMAT parquet)`);
    await store.put(key, { file: tmp });
  }
  manifest.intend(covered, 'drop');
  manifest.intend(uncovered, 'keep');
  const logger = new Logger({ level: 'error', format: 'text', bufferSize: 10, write: () => {} });
  await reconcileManifest({ store, manifest, conn, logger });
  expect(await store.stat(covered)).toBeNull();
  expect(manifest.get(covered)).toBeNull();
  expect(manifest.get(uncovered)?.rows).toBe(1);
  expect(manifest.pendingFiles()).toEqual([]);
  conn.closeSync();
  duck.closeSync();
});

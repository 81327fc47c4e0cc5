import { expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { reconcileManifest } from '../../buffer/index.ts';
import { FileManifestStore, migrations, openCatalog, type ManifestFile } from '../../catalog/index.ts';
import { DuckDBInstance } from '../../duckdb/index.ts';
import { Logger } from '../../observability/index.ts';
import { FileReaper, LocalObjectStore, type ObjectStore } from '../../storage/index.ts';
import { backupPaths } from './backup-layout.ts';
import { toBackupFile } from './backup-manifest.ts';
import { idleProgress } from './backup-progress.ts';
import { restoreBackup } from './backup-restorer.ts';

const HOUR = Date.UTC(2024, 0, 1) * 1000;
const keyOf = (n: number) => `db/m/2024/01/01/00/m_20240101_000000_00000000${n}.parquet`;
const logger = new Logger({ level: 'error', format: 'text', bufferSize: 10, write: () => {} });

/**
 * A restore that fails (or a process that dies) after some backed-up files were put but before the
 * manifest swap must not leave those files behind: the next start-up registers every unknown data
 * file, which would bring the backup's rows back next to the live ones.
 */
async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-restore-'));
  const catalog = openCatalog(join(dir, 'svc.db'), migrations);
  const store = await new LocalObjectStore(join(dir, 'data')).open();
  const manifest = new FileManifestStore(catalog);
  const duck = await DuckDBInstance.create(':memory:');
  const conn = await duck.connect();
  const parquet = async (target: string) => {
    mkdirSync(dirname(target), { recursive: true });
    await conn.run(`COPY (SELECT TIMESTAMP '2024-01-01 00:10:00' AS time, 1.0 AS v) TO '${target}' (FORMAT parquet)`);
  };
  const entry = (path: string, bytes: number, seq: number): ManifestFile => ({
    path, database: 'db', measurement: 'm', hour: HOUR, minTime: HOUR + 600e6, maxTime: HOUR + 600e6, rows: 1, bytes, columns: ['time', 'v'], seq, createdAt: new Date().toISOString(),
  });
  // Live data: one registered file.
  const scratch = store.scratchPath('live.parquet');
  await parquet(scratch);
  const info = await store.put(keyOf(1), { file: scratch });
  manifest.add([entry(keyOf(1), info.bytes, 1)]);
  // A backup of two other files.
  const root = join(dir, 'backups');
  const id = 'backup-20240101-000000-abcd';
  const paths = backupPaths(root, id);
  const files = [];
  for (const n of [2, 3]) {
    const target = join(paths.data, keyOf(n));
    await parquet(target);
    files.push(toBackupFile(entry(keyOf(n), Bun.file(target).size, n)));
  }
  mkdirSync(paths.dir, { recursive: true });
  writeFileSync(paths.manifest, JSON.stringify({ backup_id: id, files, metadata: null, config: null }));
  const restart = async () => {
    await new FileReaper({ store, manifest, logger }).collect();
    await reconcileManifest({ store, manifest, conn, logger });
  };
  return { dir, catalog, store, manifest, root, id, restart, close: () => (conn.closeSync(), duck.closeSync()) };
}

function targets(s: Awaited<ReturnType<typeof setup>>, store: ObjectStore) {
  return {
    root: s.root, store, manifest: s.manifest, reaper: new FileReaper({ store, manifest: s.manifest, logger }), catalog: s.catalog,
    dbPath: ':memory:', configPath: null, flushAll: async () => {}, secretKeyPath: null, keep: [], onMetadataRestored: () => {},
  };
}

const opts = { restoreData: true, restoreMetadata: false, restoreConfig: false };

/** `store` with `put` replaced from its `n`-th call on (1-based); `puts` lists the keys put before that. */
function breakPut(store: ObjectStore, n: number, then: () => Promise<never>) {
  const puts: string[] = [];
  const broken = Object.create(store) as ObjectStore;
  broken.put = (key, src) => (puts.length + 1 >= n ? then() : store.put(key, src).then((info) => (puts.push(key), info)));
  return { broken, puts };
}

const dataKeys = async (store: ObjectStore) => (await store.list('db/')).map((o) => o.key);

test('a restore whose copy fails half-way leaves no backed-up file for the next start to register', async () => {
  const s = await setup();
  const { broken, puts } = breakPut(s.store, 2, () => Promise.reject(new Error('disk full')));
  await expect(restoreBackup(targets(s, broken), s.id, opts, idleProgress(), new AbortController().signal)).rejects.toThrow('disk full');
  expect(puts).toHaveLength(1);
  expect(s.manifest.listAll().map((f) => f.path)).toEqual([keyOf(1)]);
  await s.restart();
  expect(s.manifest.listAll().map((f) => f.path)).toEqual([keyOf(1)]);
  expect(await dataKeys(s.store)).toEqual([keyOf(1)]);
  s.close();
});

test('a process killed during a restore leaves no backed-up file for the next start to register', async () => {
  const s = await setup();
  // The second put never returns: the process "dies" there, with the first file already in storage.
  const { broken, puts } = breakPut(s.store, 2, () => new Promise<never>(() => {}));
  void restoreBackup(targets(s, broken), s.id, opts, idleProgress(), new AbortController().signal);
  for (let i = 0; i < 100 && puts.length === 0; i++) await Bun.sleep(10);
  expect(await s.store.stat(puts[0]!)).not.toBeNull();
  await s.restart();
  expect(s.manifest.listAll().map((f) => f.path)).toEqual([keyOf(1)]);
  s.close();
});

test('a completed restore registers exactly the backed-up files, each under a key never used before', async () => {
  const s = await setup();
  await restoreBackup(targets(s, s.store), s.id, opts, idleProgress(), new AbortController().signal);
  const restored = s.manifest.listAll();
  expect(restored.map((f) => f.seq).sort((a, b) => a - b)).toEqual([2, 3]);
  for (const f of restored) expect([keyOf(1), keyOf(2), keyOf(3)]).not.toContain(f.path);
  expect(s.manifest.pendingFiles()).toEqual([]);
  await s.restart();
  expect(s.manifest.listAll().map((f) => f.path)).toEqual(restored.map((f) => f.path));
  s.close();
});

test('a backed-up file whose key holds the same object already is registered as it is, not copied', async () => {
  const s = await setup();
  const backedUp = join(backupPaths(s.root, s.id).data, keyOf(2));
  const info = await s.store.put(keyOf(2), { file: await copyToScratch(s.store, backedUp) });
  const { broken, puts } = breakPut(s.store, 3, () => Promise.reject(new Error('unexpected put')));
  await restoreBackup(targets(s, broken), s.id, opts, idleProgress(), new AbortController().signal);
  expect(puts).toHaveLength(1);
  const paths = s.manifest.listAll().map((f) => f.path);
  expect(paths).toContain(keyOf(2));
  expect(paths).toHaveLength(2);
  expect((await s.store.stat(keyOf(2)))?.bytes).toBe(info.bytes);
  s.close();
});

async function copyToScratch(store: ObjectStore, file: string): Promise<string> {
  const scratch = store.scratchPath('copy.parquet');
  await Bun.write(scratch, Bun.file(file));
  return scratch;
}

/**
 * Restores a backup into the running server. Data: every backed-up file is put through the ObjectStore
 * under a new key of its hour (skipped when its own key with the same size is already there), then one
 * manifest transaction makes the backed-up files the only registered ones (the others are tombstoned
 * and deleted by the reaper once no query reads them), so a query sees the old data or the restored
 * data, never a mix. A new key because the query engine trusts what it cached per key: its old key may
 * hold other bytes (a damaged file) that DuckDB has read, or have held them before. Metadata: the
 * live database is kept as `<db>.before-restore`, then its tables are replaced from the snapshot in one
 * transaction (see metadata-store.ts). Config: the file in use is kept as `.before-restore` and
 * overwritten; it takes effect at the next start.
 */
import { copyFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { CatalogDb, FileManifestStore, ManifestFile } from '../../catalog/index.ts';
import { notFound } from '../../lib/errors.ts';
import { dataFileKey, type FileReaper, type ObjectStore } from '../../storage/index.ts';
import { backupPaths } from './backup-layout.ts';
import { fromBackupFile, type BackupManifest } from './backup-manifest.ts';
import { checkAborted, type ProgressRecord } from './backup-progress.ts';
import { restoreTables, snapshotInto, type KeepRows } from './metadata-store.ts';

/** What to restore (the request body's flags). */
export interface RestoreOptions {
  restoreData: boolean;
  restoreMetadata: boolean;
  restoreConfig: boolean;
}

/** Where a restore goes. */
export interface RestoreTargets {
  root: string;
  store: ObjectStore;
  manifest: FileManifestStore;
  reaper: FileReaper;
  catalog: CatalogDb;
  /** The live metadata file (`auth.db_path`); ':memory:' skips the `.before-restore` copy. */
  dbPath: string;
  /** The TOML file in use; when none, a restored config goes to ./svc.toml (first on the search path). */
  configPath: string | null;
  flushAll: () => Promise<unknown>;
  /** The MQTT secret key file in use (null with mqtt.encryption_key set): restored with the metadata. */
  secretKeyPath: string | null;
  /** Live rows a metadata restore keeps. */
  keep: readonly KeepRows[];
  /** Called after the metadata tables changed (caches to drop). */
  onMetadataRestored: () => void;
}

/** Reads a backup's manifest.json; 404 when there is no such (complete) backup. */
export async function readBackupManifest(root: string, id: string): Promise<BackupManifest> {
  const file = Bun.file(backupPaths(root, id).manifest);
  if (!(await file.exists())) throw notFound(`backup not found: ${id}`);
  return (await file.json()) as BackupManifest;
}

/** Restores backup `id` as `opts` says, updating `progress`. */
export async function restoreBackup(t: RestoreTargets, id: string, opts: RestoreOptions, progress: ProgressRecord, signal: AbortSignal): Promise<void> {
  const backup = await readBackupManifest(t.root, id);
  const paths = backupPaths(t.root, id);
  if (opts.restoreData) {
    progress.total_files = backup.files.length;
    progress.total_bytes = backup.files.reduce((n, f) => n + f.bytes, 0);
  }
  if (opts.restoreMetadata && backup.metadata) {
    if (t.dbPath !== ':memory:') {
      await rm(t.dbPath + '.before-restore', { force: true });
      snapshotInto(t.catalog, t.dbPath + '.before-restore');
    }
    restoreTables(t.catalog, paths.metadataDb, t.keep);
    // Restored MQTT passwords are encrypted with the backup's key; the running service reads it at its next start.
    if (backup.metadata.secret_key && t.secretKeyPath) {
      if (await stat(t.secretKeyPath).catch(() => null)) await copyFile(t.secretKeyPath, t.secretKeyPath + '.before-restore');
      await copyFile(paths.secretKey, t.secretKeyPath);
    }
    t.onMetadataRestored();
  }
  // The TOML file the backed-up server used; without one, its effective configuration (secrets left out).
  const configFile = backup.config?.file ?? backup.effective_config?.file;
  if (opts.restoreConfig && configFile) {
    const target = t.configPath ?? join(process.cwd(), 'svc.toml');
    if (await stat(target).catch(() => null)) await copyFile(target, target + '.before-restore');
    await copyFile(join(paths.dir, configFile), target);
  }
  if (opts.restoreData) await restoreData(t, backup, paths.data, progress, signal);
}

async function restoreData(t: RestoreTargets, backup: BackupManifest, dataDir: string, progress: ProgressRecord, signal: AbortSignal): Promise<void> {
  // Rows acknowledged before the restore land in files now, so the swap below replaces them too.
  await t.flushAll();
  // Leased until registered: a tombstoned object under a restored key must not be reaped meanwhile.
  const release = t.reaper.acquire(backup.files.map((f) => f.path));
  // Keys put here: pending until the swap, so a failure or a crash before it cannot leave them for a
  // start-up rebuild to register next to the live files.
  const added: string[] = [];
  const restored: ManifestFile[] = [];
  try {
    for (const f of backup.files) {
      checkAborted(signal);
      const live = await t.store.stat(f.path);
      // The object is still there: registered again in the tier that holds it (a cold one stays cold).
      if (live && live.bytes === f.bytes) restored.push({ ...fromBackupFile(f), tier: t.manifest.tierOf(f.path) ?? f.tier ?? 'hot' });
      else {
        const scratch = t.store.scratchPath('restore.parquet');
        await copyFile(join(dataDir, f.path), scratch);
        const key = dataFileKey(f.database, f.measurement, f.hour);
        t.manifest.intend(key, 'drop');
        added.push(key);
        await t.store.put(key, { file: scratch });
        // The tier is where the put went (the manifest asks the tiered store); hot without tiering.
        restored.push({ ...fromBackupFile(f), path: key, tier: 'hot' });
      }
      progress.processed_files++;
      progress.processed_bytes += f.bytes;
    }
    checkAborted(signal);
    const live = t.manifest.listAll().map((f) => f.path);
    await t.manifest.commit(live, restored);
  } catch (err) {
    for (const k of added) {
      if (!t.manifest.get(k)) await t.store.delete(k).catch(() => false);
      t.manifest.clearPending(k);
    }
    throw err;
  } finally {
    release();
  }
  void t.reaper.collect();
}

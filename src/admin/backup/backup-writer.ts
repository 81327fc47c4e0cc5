/**
 * Creates a backup: flush every buffer (the backup holds everything acknowledged before it started),
 * then — in one synchronous step — take the file list and the metadata snapshot, so the two agree,
 * and lease those files so no compaction or delete can remove them while they are copied through the
 * ObjectStore (any backend). manifest.json is written last: a folder without it is not a backup.
 */
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { CatalogDb, FileManifestStore } from '../../catalog/index.ts';
import type { EffectiveConfig } from '../../config/index.ts';
import { VERSION } from '../../lib/version.ts';
import type { FileReaper, ObjectStore } from '../../storage/index.ts';
import { backupPaths } from './backup-layout.ts';
import { summarize, toBackupFile, type BackupManifest } from './backup-manifest.ts';
import { checkAborted, type ProgressRecord } from './backup-progress.ts';
import { snapshotInto } from './metadata-store.ts';

/** Where backups come from and go to. */
export interface BackupSources {
  root: string;
  store: ObjectStore;
  manifest: FileManifestStore;
  reaper: FileReaper;
  catalog: CatalogDb;
  /** Flushes every buffer; resolves once those rows are in registered files. */
  flushAll: () => Promise<unknown>;
  /** The TOML file in use, if any. */
  configPath: string | null;
  /** The MQTT secret key file, if one is used. */
  secretKeyPath: string | null;
  /** The effective configuration (secrets left out), written next to the TOML file as config/svc.effective.toml. */
  effectiveConfig: EffectiveConfig;
}

/** The effective configuration's name inside a backup's config/ folder. */
export const EFFECTIVE_CONFIG_FILE = 'config/svc.effective.toml';

/** Writes backup `id` under `src.root`, updating `progress`; removes the partial folder on failure. */
export async function writeBackup(src: BackupSources, id: string, progress: ProgressRecord, signal: AbortSignal): Promise<BackupManifest> {
  const paths = backupPaths(src.root, id);
  const createdAt = new Date().toISOString();
  await mkdir(paths.data, { recursive: true });
  await mkdir(paths.metadata, { recursive: true });
  let release = () => {};
  try {
    await src.flushAll();
    checkAborted(signal);
    // One synchronous step: nothing registers or replaces files between the list and the snapshot.
    const files = src.manifest.listAll();
    release = src.reaper.acquire(files.map((f) => f.path));
    snapshotInto(src.catalog, paths.metadataDb);

    progress.total_files = files.length;
    progress.total_bytes = files.reduce((n, f) => n + f.bytes, 0);
    const kept = [];
    for (const f of files) {
      checkAborted(signal);
      const target = join(paths.data, f.path);
      await mkdir(dirname(target), { recursive: true });
      const bytes = await Bun.write(target, new Response(await src.store.stream(f.path)));
      kept.push(toBackupFile(f, bytes));
      progress.processed_files++;
      progress.processed_bytes += f.bytes;
    }
    release();

    let secretKey = false;
    if (src.secretKeyPath && (await stat(src.secretKeyPath).catch(() => null))) {
      await copyFile(src.secretKeyPath, paths.secretKey);
      secretKey = true;
    }
    // Always written: a server run from environment variables alone has no TOML file to copy.
    await mkdir(paths.config, { recursive: true });
    const effectiveBytes = await Bun.write(join(paths.dir, EFFECTIVE_CONFIG_FILE), src.effectiveConfig.text);
    const effective_config = { file: EFFECTIVE_CONFIG_FILE, bytes: effectiveBytes, secrets_omitted: src.effectiveConfig.secretsOmitted };
    let config: BackupManifest['config'] = null;
    if (src.configPath && (await stat(src.configPath).catch(() => null))) {
      const file = join(paths.config, basename(src.configPath));
      await copyFile(src.configPath, file);
      config = { file: `config/${basename(src.configPath)}`, source: src.configPath, bytes: (await stat(file)).size };
    }
    const manifest: BackupManifest = {
      backup_id: id,
      version: VERSION,
      format: 1,
      created_at: createdAt,
      completed_at: new Date().toISOString(),
      storage_backend: src.store.backend,
      total_files: kept.length,
      total_bytes: kept.reduce((n, f) => n + f.bytes, 0),
      databases: summarize(kept),
      metadata: { file: 'metadata/svc.db', bytes: (await stat(paths.metadataDb)).size, secret_key: secretKey },
      config,
      effective_config,
      files: kept,
    };
    await Bun.write(paths.manifest + '.tmp', JSON.stringify(manifest, null, 2));
    await rename(paths.manifest + '.tmp', paths.manifest);
    return manifest;
  } catch (err) {
    release();
    await rm(paths.dir, { recursive: true, force: true });
    throw err;
  }
}

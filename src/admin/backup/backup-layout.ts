/**
 * Where a backup lives: `<backup.local_path>/backup-<yyyymmdd>-<hhmmss>-<suffix>/` holding
 * `manifest.json`, `data/` (Parquet files under their storage keys), `metadata/svc.db` (SQLite
 * snapshot, plus `secret.key` when MQTT passwords are encrypted with a key file) and `config/`.
 */
import { join, resolve } from 'node:path';
import { randomId } from '../../lib/crypto.ts';
import { invalid } from '../../lib/errors.ts';

const ID = /^backup-\d{8}-\d{6}-[a-z0-9]{4,16}$/;
const pad = (n: number) => String(n).padStart(2, '0');

/** A new backup id for time `now` (UTC). */
export function newBackupId(now = new Date()): string {
  const d = `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}`;
  const t = `${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}`;
  return `backup-${d}-${t}-${randomId(3)}`;
}

/** True for a well-formed backup id (the only names ever joined into a path). */
export function isBackupId(id: string): boolean {
  return ID.test(id);
}

/** Throws 400 unless `id` is a well-formed backup id. */
export function assertBackupId(id: string): string {
  if (!isBackupId(id)) throw invalid(`invalid backup id '${id}': expected backup-<yyyymmdd>-<hhmmss>-<suffix>`);
  return id;
}

/** The paths inside one backup folder. */
export function backupPaths(root: string, id: string) {
  const dir = join(resolve(root), assertBackupId(id));
  return {
    dir,
    manifest: join(dir, 'manifest.json'),
    data: join(dir, 'data'),
    metadata: join(dir, 'metadata'),
    metadataDb: join(dir, 'metadata', 'svc.db'),
    secretKey: join(dir, 'metadata', 'secret.key'),
    config: join(dir, 'config'),
  };
}

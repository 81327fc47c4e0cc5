/**
 * Start-up check that the file manifest matches storage: entries whose file is gone are dropped, and
 * data files the manifest does not know (a lost or older metadata file, a restored backup) are read
 * and registered. Run before the service reports ready.
 */
import type { FileManifestStore, ManifestFile } from '../catalog/index.ts';
import type { DuckDBConnection } from '../duckdb/index.ts';
import { messageOf } from '../lib/errors.ts';
import type { Logger } from '../observability/index.ts';
import { readParquetSummary } from '../parquet/index.ts';
import { parseDataFileKey, type ObjectStore } from '../storage/index.ts';

/** What a reconcile changed. */
export interface ReconcileResult {
  files: number;
  added: number;
  removed: number;
  unreadable: string[];
}

/** Brings the manifest in line with the data files in `store` (see the file comment). */
export async function reconcileManifest(deps: { store: ObjectStore; manifest: FileManifestStore; conn: DuckDBConnection; logger: Logger }): Promise<ReconcileResult> {
  const { store, manifest, conn, logger } = deps;
  // Files written but never registered before a crash (see FileManifestStore.intend): `drop` ones hold
  // rows that exist elsewhere or were never acknowledged; `keep` ones are registered below.
  for (const p of manifest.pendingFiles()) {
    if (p.onCrash === 'drop' && (await store.delete(p.path))) logger.info('removed a data file that was never registered before a crash', { path: p.path });
    manifest.clearPending(p.path);
  }
  const objects = (await store.list('')).filter((o) => o.key.endsWith('.parquet'));
  const onDisk = new Set(objects.map((o) => o.key));
  const known = new Map(manifest.listAll().map((f) => [f.path, f] as const));
  const removed = [...known.keys()].filter((p) => !onDisk.has(p));
  const added: ManifestFile[] = [];
  const unreadable: string[] = [];
  for (const obj of objects) {
    if (known.has(obj.key)) continue;
    const layout = parseDataFileKey(obj.key);
    if (!layout) continue;
    try {
      const s = await readParquetSummary(conn, await store.localPath(obj.key));
      added.push({
        path: obj.key,
        database: layout.database,
        measurement: layout.measurement,
        hour: layout.hourMicros,
        minTime: s.minTime,
        maxTime: s.maxTime,
        rows: s.rows,
        bytes: obj.bytes,
        columns: s.columns,
        // Keys sort by hour and then write time, so new sequence numbers in key order keep write order per hour.
        seq: manifest.nextSeq(),
        createdAt: new Date(obj.modifiedMs).toISOString(),
        // A tiered store says where the object lives, so a rebuilt manifest reads cold files from cold.
        ...(obj.tier ? { tier: obj.tier } : {}),
      });
    } catch (err) {
      unreadable.push(obj.key);
      logger.warn('cannot read data file during manifest rebuild; skipped', { path: obj.key, error: messageOf(err) });
    }
  }
  if (removed.length > 0 || added.length > 0) {
    manifest.replace(removed, added);
    logger.info('file manifest reconciled with storage', { added: added.length, removed: removed.length, files: objects.length });
  }
  return { files: objects.length, added: added.length, removed: removed.length, unreadable };
}

import type { FileManifestStore } from '../catalog/index.ts';
import { messageOf } from '../lib/errors.ts';
import type { Logger } from '../observability/index.ts';
import type { ObjectStore } from './object-store.ts';

/**
 * Deletes data files that left the manifest (compaction inputs, emptied or dropped files) once no
 * running query reads them. Queries lease the files they plan; a tombstoned file is deleted when its
 * last lease is released, so a query running during a compaction or delete still reads what it planned.
 */
export class FileReaper {
  private readonly leases = new Map<string, number>();
  private collecting: Promise<number> | null = null;
  private again = false;

  /**
   * With `graceMs` (a cluster, where other nodes' queries hold no lease here) a tombstoned object is
   * kept that long after it left the manifest, and collected by a timer once the grace has passed.
   */
  constructor(
    private readonly deps: { store: ObjectStore; manifest: FileManifestStore; logger: Logger; graceMs?: number },
  ) {
    const grace = deps.graceMs ?? 0;
    if (grace > 0) setInterval(() => void this.collect(), Math.max(1000, Math.min(60_000, grace / 4))).unref();
  }

  /** Marks `keys` as read by a query until the returned release function is called (idempotent). */
  acquire(keys: readonly string[]): () => void {
    for (const k of keys) this.leases.set(k, (this.leases.get(k) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      let freed = false;
      for (const k of keys) {
        const n = (this.leases.get(k) ?? 1) - 1;
        if (n <= 0) {
          this.leases.delete(k);
          freed = true;
        } else this.leases.set(k, n);
      }
      if (freed && this.deps.manifest.hasTombstones()) void this.collect();
    };
  }

  /** True while some query holds `key`. */
  inUse(key: string): boolean {
    return this.leases.has(key);
  }

  /** Deletes every tombstoned object that no query holds; returns how many were deleted. Runs are serialized. */
  collect(): Promise<number> {
    if (this.collecting) {
      this.again = true;
      return this.collecting;
    }
    this.collecting = this.run().finally(() => {
      this.collecting = null;
      if (this.again) {
        this.again = false;
        void this.collect();
      }
    });
    return this.collecting;
  }

  private async run(): Promise<number> {
    const { store, manifest, logger } = this.deps;
    let deleted = 0;
    if (!manifest.hasTombstones()) return 0;
    const grace = this.deps.graceMs ?? 0;
    for (const path of manifest.tombstones(grace > 0 ? new Date(Date.now() - grace) : undefined)) {
      if (this.leases.has(path)) continue;
      // A path that is live again (rewritten in place) must never be deleted.
      if (manifest.get(path)) {
        manifest.clearTombstone(path);
        continue;
      }
      try {
        if (await store.delete(path)) deleted++;
        manifest.clearTombstone(path);
      } catch (err) {
        logger.warn('cannot delete replaced data file; will retry', { path, error: messageOf(err) });
      }
    }
    return deleted;
  }
}

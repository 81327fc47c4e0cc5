/**
 * Moves one data file from the hot store to the cold one, crash-safe:
 * 1. record the move (tiering_moves), 2. copy to cold, 3. verify size and SHA-256 of the cold copy
 * (read back through the cold read cache, which also warms it), 4. switch the manifest entry to cold in
 * one transaction, 5. delete the hot copy once no query holds the file, 6. forget the move.
 * Queries read the tier the manifest names, so at every step exactly one copy is visible. `settle`
 * finishes what a crash left: a move whose file is still hot drops the cold copy; one whose file is
 * cold drops the hot copy (once no query reads it).
 */
import { createHash } from 'node:crypto';
import type { FileManifestStore, ManifestFile } from '../catalog/index.ts';
import type { MeasurementLocks } from '../admin/index.ts';
import type { ObjectStore } from '../storage/index.ts';
import type { TieringStore } from './tiering-store.ts';

/** Steps where a test build may kill itself (tiering.test_crash_at). */
export const MOVE_CRASH_STEPS = ['after_begin', 'after_copy', 'after_switch'] as const;
export type MoveCrashStep = (typeof MOVE_CRASH_STEPS)[number];

declare const SVC_TEST_HOOKS: boolean | undefined;

/** What the mover needs. */
export interface MoverDeps {
  hot: ObjectStore;
  cold: ObjectStore;
  manifest: FileManifestStore;
  store: TieringStore;
  /** True while a running query holds `key` (the reaper's leases). */
  inUse(key: string): boolean;
  /** The per-measurement locks of compaction, delete and retention: the switch never interleaves with their swaps. */
  locks?: MeasurementLocks;
  /** tiering.test_crash_at ('' in production). */
  crashAt?: string;
  /**
   * A cluster's cluster.file_grace_period: other nodes' queries hold no lease here, so a hot copy
   * stays this long after its switch (deleted by a later settle). 0 on a standalone server.
   */
  graceMs?: number;
}

/**
 * How long a move waits for the queries holding the file before it leaves the hot copy to a later
 * settle (the end of the run, the next run, the next start): queries planned after the switch hold the
 * same key while they read the cold copy, so a busy measurement must not keep a mover waiting.
 */
const READER_WAIT_MS = 2_000;

/** The outcome of one move. */
export type MoveOutcome = { moved: true; bytes: number } | { moved: false; reason: string };

/** Moves files hot -> cold; see the file comment. */
export class FileMover {
  constructor(private readonly deps: MoverDeps) {}

  /** A cluster's grace period for hot copies (0: none; then a later settle deletes them). */
  get graceMs(): number {
    return this.deps.graceMs ?? 0;
  }

  /** Whether hot copies wait out a cluster's grace period (then only a later settle deletes them). */
  get keepsHotCopies(): boolean {
    return this.graceMs > 0;
  }

  /** Moves `file` (listed hot) to cold; throws when the copy cannot be made or verified (nothing changes then). */
  async move(file: ManifestFile): Promise<MoveOutcome> {
    const { hot, cold, manifest, store } = this.deps;
    store.beginMove(file.path);
    this.crash('after_begin');
    let switched = false;
    try {
      const bytes = await hot.get(file.path);
      const sum = sha256(bytes);
      await cold.put(file.path, bytes);
      this.crash('after_copy');
      await this.verify(file.path, bytes.byteLength, sum);
      // The file may have been compacted, deleted or moved while it was copied: switch only the entry copied,
      // under the measurement's lock so no rewrite swaps it away between the check and the switch.
      const key = { database: file.database, measurement: file.measurement };
      const now = await (this.deps.locks ? this.deps.locks.run([key], () => this.switchToCold(file.path)) : this.switchToCold(file.path));
      if (!now.switched) {
        await this.dropCold(file.path, now.listed);
        store.endMove(file.path);
        return { moved: false, reason: now.listed ? 'already cold' : 'no longer listed' };
      }
      switched = true;
      this.crash('after_switch');
      if (!this.deps.graceMs) await this.dropHot(file.path, READER_WAIT_MS);
      return { moved: true, bytes: bytes.byteLength };
    } catch (err) {
      // A cold copy another node's switch already lists (a cluster's refused commit) is not this move's to drop.
      if (!switched && manifest.get(file.path)?.tier !== 'cold') {
        await cold.delete(file.path).catch(() => false);
        store.endMove(file.path);
      }
      throw err;
    }
  }

  /** Switches the manifest entry of `path` to cold when it is still listed hot. */
  private async switchToCold(path: string): Promise<{ listed: ManifestFile | null; switched: boolean }> {
    const listed = this.deps.manifest.get(path);
    if (!listed || listed.tier === 'cold') return { listed, switched: false };
    await this.deps.manifest.commit([path], [{ ...listed, tier: 'cold', movedAt: new Date().toISOString() }]);
    return { listed, switched: true };
  }

  /** Finishes or undoes the moves a crash (or a slow reader) left; returns how many it settled. */
  async settle(): Promise<number> {
    const { manifest, store } = this.deps;
    let n = 0;
    for (const path of store.openMoves()) {
      const listed = manifest.get(path);
      if (listed?.tier === 'cold') {
        const grace = this.deps.graceMs ?? 0;
        if (grace > 0 && Date.now() - Date.parse(listed.movedAt ?? '') < grace) continue;
        if (await this.dropHot(path, 0)) n++;
      } else {
        await this.dropCold(path, listed);
        store.endMove(path);
        n++;
      }
    }
    return n;
  }

  /**
   * In a cluster: deletes the hot copies of cold files whose grace period has passed and that no open
   * move here records, left by a node that moved them and then left (its moves were its own). One
   * listing per database of the hot store; returns how many it deleted.
   */
  async dropStrayHotCopies(): Promise<number> {
    const grace = this.deps.graceMs ?? 0;
    if (grace <= 0) return 0;
    const open = new Set(this.deps.store.openMoves());
    const due = new Set<string>();
    const databases = new Set<string>();
    for (const f of this.deps.manifest.listAll()) {
      if (f.tier !== 'cold' || open.has(f.path) || !(Date.now() - Date.parse(f.movedAt ?? '') >= grace)) continue;
      due.add(f.path);
      databases.add(f.database);
    }
    let n = 0;
    for (const db of databases)
      for (const o of await this.deps.hot.list(`${db}/`)) {
        // Listed cold still (a rewrite may have removed it meanwhile: then the reaper's tombstone decides).
        if (!due.has(o.key) || this.deps.inUse(o.key) || this.deps.manifest.get(o.key)?.tier !== 'cold') continue;
        if (await this.deps.hot.delete(o.key)) n++;
      }
    return n;
  }

  /** Deletes the hot copy of a cold file once no query holds it (waiting up to `waitMs`); false when it must wait for the next settle. */
  private async dropHot(path: string, waitMs: number): Promise<boolean> {
    const until = Date.now() + waitMs;
    while (this.deps.inUse(path)) {
      if (Date.now() >= until) return false;
      await Bun.sleep(100);
    }
    await this.deps.hot.delete(path);
    this.deps.store.endMove(path);
    return true;
  }

  /** Deletes a cold copy that is not the listed one (the file is hot, or gone). */
  private async dropCold(path: string, listed: ManifestFile | null): Promise<void> {
    if (listed?.tier === 'cold') return;
    await this.deps.cold.delete(path);
  }

  private async verify(path: string, bytes: number, sum: string): Promise<void> {
    const info = await this.deps.cold.stat(path);
    if (!info || info.bytes !== bytes) throw new Error(`cannot verify the cold copy of ${path}: ${info ? `${info.bytes} bytes, expected ${bytes}` : 'it is missing'}`);
    const back = sha256(new Uint8Array(await Bun.file(await this.deps.cold.localPath(path)).arrayBuffer()));
    if (back !== sum) throw new Error(`cannot verify the cold copy of ${path}: its checksum differs from the hot copy's`);
  }

  private crash(step: MoveCrashStep): void {
    if (typeof SVC_TEST_HOOKS !== 'undefined' && !SVC_TEST_HOOKS) return;
    if (this.deps.crashAt === step) process.kill(process.pid, 'SIGKILL');
  }
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

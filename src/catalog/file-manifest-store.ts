import { AppError, messageOf } from '../lib/errors.ts';
import type { CatalogDb } from './connection.ts';

/** One Parquet data file as the catalog knows it. Times are epoch microseconds (UTC). */
export interface ManifestFile {
  /** Storage key relative to the storage root: `<db>/<m>/YYYY/MM/DD/HH/<file>.parquet`. */
  path: string;
  database: string;
  measurement: string;
  /** Start of the UTC hour partition, epoch µs. */
  hour: number;
  minTime: number;
  maxTime: number;
  rows: number;
  bytes: number;
  columns: string[];
  /** Monotonic flush sequence: a larger seq holds newer writes (last-write-wins). */
  seq: number;
  createdAt: string;
  /** Which storage holds the object: the hot store (default) or the cold one (tiering). */
  tier?: FileTier;
  /** When the file moved to cold (ISO time), or null. */
  movedAt?: string | null;
}

/** The storage tier of a data file. */
export type FileTier = 'hot' | 'cold';

/** Where a just-written object went (the tiered store knows; asked once per file), or undefined when it did not write it. */
export type Placement = (path: string) => FileTier | undefined;

interface Row {
  path: string;
  database: string;
  measurement: string;
  hour: number;
  min_time: number;
  max_time: number;
  rows: number;
  bytes: number;
  columns: string;
  seq: number;
  created_at: string;
  tier: FileTier;
  moved_at: string | null;
}

const toFile = (r: Row): ManifestFile => ({
  path: r.path,
  database: r.database,
  measurement: r.measurement,
  hour: r.hour,
  minTime: r.min_time,
  maxTime: r.max_time,
  rows: r.rows,
  bytes: r.bytes,
  columns: JSON.parse(r.columns) as string[],
  seq: r.seq,
  createdAt: r.created_at,
  tier: r.tier,
  movedAt: r.moved_at,
});

/**
 * Where a manifest change must be accepted before it counts: etcd in a cluster. `commit` resolves
 * once the change is accepted and applied to this store (which the journal does through
 * `applyRemote`, in the journal's own order); it rejects, changing nothing, when it is refused, or
 * with `ChangeHandedOn` when the change is recorded but another node completes it.
 */
export interface ManifestJournal {
  /** `covers`: the write-ahead tickets whose rows the added files hold (recorded in the same change). */
  commit(removed: readonly string[], added: readonly ManifestFile[], covers?: readonly unknown[]): Promise<void>;
}

/**
 * A change the journal recorded whole but could not finish applying (this node lost its role, or etcd
 * stopped answering): the next primary completes it, so its files must stay in storage and the work
 * must not be done again here.
 */
export class ChangeHandedOn extends AppError {
  constructor(cause: unknown) {
    super('unavailable', `the manifest change is recorded but not complete; the next primary completes it (${messageOf(cause)})`, { headers: { 'Retry-After': '1' }, cause });
  }
}

/** Which files exist, per measurement and time range: the query planner's index and the writers' ledger. */
export class FileManifestStore {
  private changes = 0;
  private journal: ManifestJournal | null = null;
  private placement: Placement = () => undefined;
  /**
   * Tombstones recorded, counted here (this store is their only writer) so that the reaper, asked
   * after every query, answers "nothing to delete" without a database read; null until first asked.
   */
  private tombstoneCount: number | null = null;

  constructor(private readonly db: CatalogDb) {}

  /** Changes with every write to the file list, so a reader may keep what `list` returned until it does. */
  get version(): number {
    return this.changes;
  }

  /** Reserves the next flush sequence number (durable, monotonic across restarts). */
  nextSeq(): number {
    const row = this.db.query<{ next: number }, []>('UPDATE file_seq SET next = next + 1 WHERE id = 1 RETURNING next - 1 AS next').get();
    return row!.next;
  }

  /** Routes every `commit` through `journal` (a cluster's shared manifest); null goes back to local only. */
  setJournal(journal: ManifestJournal | null): void {
    this.journal = journal;
  }

  /** Tells the store where new objects were written (tiering), so each added file records its tier. */
  setPlacement(placement: Placement): void {
    this.placement = placement;
  }

  /**
   * The way features change the file list: `replace` locally, or in a cluster through the journal
   * first; files removed and not re-added get tombstones here, on the node that removed them.
   */
  async commit(removed: readonly string[], written: readonly ManifestFile[], covers?: readonly unknown[]): Promise<void> {
    const added = written.map((f) => this.placed(f));
    if (!this.journal) return this.write(removed, added, true);
    await this.journal.commit(removed, added, covers);
    const readded = new Set(added.map((f) => f.path));
    this.tombstone(removed.filter((p) => !readded.has(p)));
  }

  /** `f` with the tier its object was just written to when the tiered store knows it, else the tier it names (default hot). */
  private placed(f: ManifestFile): ManifestFile {
    const tier = this.placement(f.path) ?? f.tier ?? 'hot';
    return { ...f, tier, movedAt: tier === 'cold' ? (f.movedAt ?? new Date().toISOString()) : null };
  }

  /** Records new files locally (tests and local rebuilds; features call `commit`). */
  add(files: readonly ManifestFile[]): void {
    this.replace([], files);
  }

  /** Applies a change another node committed: like `replace`, but the removed objects are not ours to delete. */
  applyRemote(removed: readonly string[], added: readonly ManifestFile[]): void {
    this.write(removed, added, false);
    this.seqAbove(added);
  }

  /** Another node's files keep last-write-wins only if this node's next flush sequence is above theirs. */
  private seqAbove(files: readonly ManifestFile[]): void {
    let top = -1;
    for (const f of files) if (f.seq > top) top = f.seq;
    if (top >= 0) this.db.query('UPDATE file_seq SET next = max(next, ?) WHERE id = 1').run(top + 1);
  }

  /** Replaces the whole file list with `files` (a node loading the shared manifest). */
  reset(files: readonly ManifestFile[]): void {
    this.db.transaction(() => {
      this.db.exec('DELETE FROM files');
      this.write([], files, false);
      this.seqAbove(files);
    })();
  }

  /** Records tombstones for objects this node must delete once no query reads them. */
  tombstone(paths: readonly string[]): void {
    if (paths.length === 0) return;
    const tomb = this.db.query('INSERT OR IGNORE INTO file_tombstones (path, created_at) VALUES (?, ?)');
    const now = new Date().toISOString();
    let n = 0;
    this.db.transaction(() => {
      for (const p of paths) n += tomb.run(p, now).changes;
    })();
    if (this.tombstoneCount !== null) this.tombstoneCount += n;
  }

  /**
   * Atomically removes `removed` paths and records `added` files (compaction, delete rewrites). Each
   * removed path that is not re-added gets a tombstone in the same transaction: its object is deleted
   * later by the reaper (once no query reads it), and a crash before that cannot bring it back.
   */
  replace(removed: readonly string[], added: readonly ManifestFile[]): void {
    this.write(removed, added.map((f) => this.placed(f)), true);
  }

  private write(removed: readonly string[], added: readonly ManifestFile[], tombstones: boolean): void {
    const del = this.db.query('DELETE FROM files WHERE path = ?');
    const tomb = this.db.query('INSERT OR IGNORE INTO file_tombstones (path, created_at) VALUES (?, ?)');
    const clearPending = this.db.query('DELETE FROM pending_files WHERE path = ?');
    const readded = new Set(added.map((f) => f.path));
    const now = new Date().toISOString();
    const ins = this.db.query(
      `INSERT OR REPLACE INTO files (path, database, measurement, hour, min_time, max_time, rows, bytes, columns, seq, created_at, tier, moved_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.changes++;
    let tombstoned = 0;
    this.db.transaction(() => {
      for (const p of removed) {
        del.run(p);
        if (tombstones && !readded.has(p)) tombstoned += tomb.run(p, now).changes;
      }
      for (const f of added) {
        clearPending.run(f.path);
        ins.run(f.path, f.database, f.measurement, f.hour, f.minTime, f.maxTime, f.rows, f.bytes, JSON.stringify(f.columns), f.seq, f.createdAt, f.tier ?? 'hot', f.movedAt ?? null);
      }
      // The sequence stays ahead of every recorded file, also when files come from a rebuild or restore.
      const maxSeq = added.reduce((m, f) => Math.max(m, f.seq), 0);
      if (maxSeq > 0) this.db.query('UPDATE file_seq SET next = max(next, ?) WHERE id = 1').run(maxSeq + 1);
    })();
    // Counted once committed: a transaction that failed recorded none.
    if (this.tombstoneCount !== null) this.tombstoneCount += tombstoned;
  }

  /** Forgets files by path. */
  remove(paths: readonly string[]): void {
    this.replace(paths, []);
  }

  /** Files of one measurement overlapping [minTime, maxTime] (inclusive; either bound optional), oldest first. */
  list(q: { database: string; measurement: string; minTime?: number; maxTime?: number }): ManifestFile[] {
    const rows = this.db
      .query<Row, [string, string, number, number]>(
        `SELECT * FROM files WHERE database = ? AND measurement = ? AND max_time >= ? AND min_time <= ?
         ORDER BY min_time, seq`,
      )
      .all(q.database, q.measurement, q.minTime ?? Number.MIN_SAFE_INTEGER, q.maxTime ?? Number.MAX_SAFE_INTEGER);
    return rows.map(toFile);
  }

  /** Every file of a database (all measurements), or of everything when `database` is omitted. */
  listAll(database?: string): ManifestFile[] {
    const rows =
      database === undefined
        ? this.db.query<Row, []>('SELECT * FROM files ORDER BY database, measurement, min_time').all()
        : this.db.query<Row, [string]>('SELECT * FROM files WHERE database = ? ORDER BY measurement, min_time').all(database);
    return rows.map(toFile);
  }

  /** One file by path, or null. */
  get(path: string): ManifestFile | null {
    const row = this.db.query<Row, [string]>('SELECT * FROM files WHERE path = ?').get(path);
    return row ? toFile(row) : null;
  }

  /** The tier of a listed file, or null when the manifest does not list it. */
  tierOf(path: string): FileTier | null {
    return this.db.query<{ tier: FileTier }, [string]>('SELECT tier FROM files WHERE path = ?').get(path)?.tier ?? null;
  }

  /** Whether some listed file of the partition folder of `path` (same database, measurement and hour) is cold. */
  coldHour(database: string, measurement: string, hour: number): boolean {
    return !!this.db.query("SELECT 1 FROM files WHERE database = ? AND measurement = ? AND hour = ? AND tier = 'cold' LIMIT 1").get(database, measurement, hour);
  }

  /** Distinct measurements with files, optionally within one database. */
  measurements(database?: string): { database: string; measurement: string }[] {
    return database === undefined
      ? this.db.query<{ database: string; measurement: string }, []>('SELECT DISTINCT database, measurement FROM files ORDER BY 1, 2').all()
      : this.db
          .query<{ database: string; measurement: string }, [string]>('SELECT DISTINCT database, measurement FROM files WHERE database = ? ORDER BY 2')
          .all(database);
  }

  /**
   * Records that a file is about to appear in storage before it is registered. A crash between the
   * two leaves a pending row that start-up settles by `onCrash`: `drop` when the rows exist elsewhere
   * or were never acknowledged (a flush the WAL replays, an uncommitted import or rewrite), `keep` when
   * the file is the only copy of acknowledged rows (a flush without WAL), which registers it.
   */
  intend(path: string, onCrash: 'drop' | 'keep'): void {
    this.db
      .query('INSERT OR REPLACE INTO pending_files (path, drop_on_recovery, created_at) VALUES (?, ?, ?)')
      .run(path, onCrash === 'drop' ? 1 : 0, new Date().toISOString());
  }

  /** Files written but never registered (see `intend`). */
  pendingFiles(): { path: string; onCrash: 'drop' | 'keep' }[] {
    return this.db
      .query<{ path: string; drop_on_recovery: number }, []>('SELECT path, drop_on_recovery FROM pending_files ORDER BY created_at')
      .all()
      .map((r) => ({ path: r.path, onCrash: r.drop_on_recovery === 1 ? ('drop' as const) : ('keep' as const) }));
  }

  /** Forgets a pending file once start-up has settled it. */
  clearPending(path: string): void {
    this.db.query('DELETE FROM pending_files WHERE path = ?').run(path);
  }

  /** Paths whose objects wait for deletion (see `replace`), only those recorded before `before` when given. */
  tombstones(before?: Date): string[] {
    const rows = before
      ? this.db.query<{ path: string }, [string]>('SELECT path FROM file_tombstones WHERE created_at < ? ORDER BY created_at').all(before.toISOString())
      : this.db.query<{ path: string }, []>('SELECT path FROM file_tombstones ORDER BY created_at').all();
    return rows.map((r) => r.path);
  }

  /** Whether some object waits for deletion. */
  hasTombstones(): boolean {
    this.tombstoneCount ??= this.db.query<{ n: number }, []>('SELECT count(*) AS n FROM file_tombstones').get()!.n;
    return this.tombstoneCount > 0;
  }

  /** Forgets a tombstone once its object is gone (or the path is live again). */
  clearTombstone(path: string): void {
    const { changes } = this.db.query('DELETE FROM file_tombstones WHERE path = ?').run(path);
    if (this.tombstoneCount !== null) this.tombstoneCount -= changes;
  }

  /** Forgets every file (before a rebuild from a storage listing). */
  clear(): void {
    this.changes++;
    this.db.exec('DELETE FROM files');
  }
}

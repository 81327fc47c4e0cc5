/**
 * The cluster's file manifest, owned by etcd: one key per data file under `<prefix>/manifest/files/`.
 * Every registration and every swap is one etcd transaction; each node's SQLite manifest is a copy
 * kept current by one watch, applied in revision order. A committing node applies its own change
 * through that same watch (it waits for its revision), so one path orders every change.
 */
import type { FileManifestStore, ManifestFile, ManifestJournal } from '../catalog/index.ts';
import { AppError } from '../lib/errors.ts';
import type { Compare, EtcdClient, Op } from './etcd/etcd-client.ts';
import { keepTrying } from './keep-trying.ts';
import { watch, type Watch } from './etcd/watch.ts';
import type { WatchEvent } from './etcd/wire.ts';
import { manifestEpoch, type ManifestSnapshots } from './manifest-snapshot.ts';

interface Log {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** etcd refuses transactions of more than 128 operations by default; stay well under it. */
const MAX_OPS = 100;
/** Page size of the initial load. */
const PAGE = 500;
/** How long a committing node waits for its own change to come back through the watch. */
const APPLY_WAIT_MS = 10_000;
/** How long a node started from a snapshot waits to replay the changes after it before serving. */
const REPLAY_WAIT_MS = 30_000;

/** The shared manifest of one cluster; see the file comment. */
export class SharedManifest implements ManifestJournal {
  private applied = 0;
  private readonly waiters = new Set<{ revision: number; resolve: () => void }>();
  private w: Watch | null = null;
  private closed = false;
  private epoch: string | null = null;
  private snapshotTimer: ReturnType<typeof setInterval> | null = null;
  private snapshotRevision = 0;

  constructor(
    private readonly client: EtcdClient,
    private readonly prefix: string,
    private readonly local: FileManifestStore,
    private readonly log: Log,
    /** The comparison that fences this node's registrations (its writer leadership), when it has one. */
    private readonly fence: () => Compare | null = () => null,
    /** Snapshots in the bucket (cluster.manifest_snapshot_interval > 0). */
    private readonly snapshots: ManifestSnapshots | null = null,
    /** A registration failed its fence: this node no longer holds its role. */
    private readonly onFenced: () => void = () => {},
  ) {}

  private get root(): string {
    return `${this.prefix}/manifest/files/`;
  }

  private get headKey(): string {
    return `${this.prefix}/manifest/head`;
  }

  /** One read of the head at a time; callers arriving meanwhile share it. */
  private headRead: Promise<number> | null = null;

  /**
   * The revision of the cluster's last manifest change (a linearizable read) and the one this copy has
   * applied: behind while `applied < head`.
   */
  async catchUp(): Promise<{ head: number; applied: number }> {
    this.headRead ??= this.client.get(this.headKey).then(
      (kv) => {
        this.headRead = null;
        return kv ? Number(kv.mod_revision) : 0;
      },
      (err: unknown) => {
        this.headRead = null;
        throw err;
      },
    );
    const head = await this.headRead;
    return { head, applied: this.applied };
  }

  /** The revision of the last change applied to the local copy. */
  get revision(): number {
    return this.applied;
  }

  /**
   * Loads the manifest into the local copy (from the bucket's snapshot plus the changes after it, or
   * whole from etcd at one revision), then follows changes from there.
   */
  async start(): Promise<void> {
    await this.load(true);
  }

  private async load(useSnapshot: boolean): Promise<void> {
    if (this.snapshots) this.epoch ??= await manifestEpoch(this.client, this.prefix);
    const snapshot = useSnapshot && this.snapshots && this.epoch ? await this.snapshots.read(this.epoch) : null;
    let files: ManifestFile[] = [];
    let revision = 0;
    if (snapshot) {
      files = snapshot.files;
      revision = snapshot.revision;
    } else {
      let after: string | undefined;
      for (;;) {
        const page = await this.client.getPrefix(this.root, { limit: PAGE, ...(revision ? { revision } : {}), ...(after !== undefined ? { startAfter: after } : {}) });
        revision ||= page.revision;
        for (const kv of page.kvs) files.push(JSON.parse(kv.value) as ManifestFile);
        if (!page.more || page.kvs.length === 0) break;
        after = page.kvs[page.kvs.length - 1]!.key;
      }
    }
    this.local.reset(files);
    this.advance(revision);
    this.w?.close();
    if (this.closed) return;
    this.w = watch(this.client, this.root, { prefix: true, fromRevision: revision + 1 }, {
      onEvents: (events, rev) => this.apply(events, rev),
      onCompacted: (compacted) => {
        this.log.warn('the shared manifest history was compacted past this node; loading it again', { compacted });
        void keepTrying('load the shared manifest', () => this.load(false), () => this.closed, (m, f) => this.log.warn(m, f));
      },
      onError: (err) => this.log.warn('shared manifest watch interrupted; resuming', { error: err.message }),
    });
    if (snapshot) {
      // Serve only once the changes after the snapshot are applied (the head is the last change).
      const { head } = await this.catchUp();
      if (!(await this.appliedWithin(head, REPLAY_WAIT_MS))) this.log.warn('changes after the manifest snapshot not replayed in time; serving while they arrive', { snapshot: revision, head });
    }
    this.log.info('shared manifest loaded', { files: files.length, revision, from: snapshot ? 'snapshot' : 'etcd', applied: this.applied });
  }

  /**
   * Writes a snapshot every `intervalMs` while `shouldWrite()` holds (the active compactor) and the
   * copy has changed since the last one.
   */
  startSnapshots(intervalMs: number, shouldWrite: () => boolean): void {
    if (!this.snapshots || intervalMs <= 0) return;
    const snapshots = this.snapshots;
    this.snapshotTimer = setInterval(() => {
      if (!shouldWrite() || !this.epoch || this.applied <= this.snapshotRevision) return;
      // The copy and its revision are read in one turn: no watch event lands between them.
      const revision = this.applied;
      const files = this.local.listAll();
      snapshots.write(this.epoch, revision, files).then(
        () => (this.snapshotRevision = revision),
        (err: Error) => this.log.warn('cannot write the manifest snapshot; retried at the next interval', { error: err.message }),
      );
    }, intervalMs);
    this.snapshotTimer.unref?.();
  }

  /** True once the copy has applied `revision`, false after `timeoutMs`. */
  private async appliedWithin(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.applied >= revision) return true;
    let waiter!: { revision: number; resolve: () => void };
    const done = new Promise<void>((resolve) => (waiter = { revision, resolve }));
    this.waiters.add(waiter);
    let timer: ReturnType<typeof setTimeout> | null = null;
    await Promise.race([done, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    if (timer) clearTimeout(timer);
    this.waiters.delete(waiter);
    return this.applied >= revision;
  }

  private apply(events: WatchEvent[], revision: number): void {
    const removed: string[] = [];
    const added: ManifestFile[] = [];
    for (const e of events) {
      if (e.type === 'DELETE') removed.push(e.kv.key.slice(this.root.length));
      else added.push(JSON.parse(e.kv.value) as ManifestFile);
    }
    this.local.applyRemote(removed, added);
    this.advance(revision);
  }

  private advance(revision: number): void {
    this.applied = Math.max(this.applied, revision);
    for (const w of this.waiters) if (w.revision <= this.applied) w.resolve();
  }

  private async appliedUpTo(revision: number, removed: readonly string[], added: readonly ManifestFile[]): Promise<void> {
    if (await this.appliedWithin(revision, APPLY_WAIT_MS)) return;
    // Committed in etcd whatever happens here: never report failure. Apply directly; the watch repeats it harmlessly.
    this.log.warn('own manifest change not seen through the watch in time; applied directly', { revision });
    this.local.applyRemote(removed, added);
  }


  /** Extra operations of a change that covers write-ahead tickets (the shared WAL's covered record). */
  coverage: (covers: readonly unknown[]) => Op[] = () => [];

  /**
   * Commits a change in etcd (refused when a file it removes or changes in place is no longer
   * registered, or the fence fails); what `covers` records goes in the transaction that registers the last part.
   */
  async commit(removed: readonly string[], added: readonly ManifestFile[], covers: readonly unknown[] = []): Promise<void> {
    const readded = new Set(added.map((f) => f.path));
    const gone = removed.filter((p) => !readded.has(p));
    // A file changed in place (tiering's switch to cold) must still be registered: without that check a
    // node whose copy lags would register again a file another node just removed (a delete's rewrite).
    const kept = removed.filter((p) => readded.has(p));
    if (gone.length + added.length === 0) return;
    // Pure removals (a dropped database) and pure registrations (a flush over many hours) may go in parts.
    if (gone.length + added.length > MAX_OPS && kept.length === 0 && (gone.length === 0 || added.length === 0)) {
      for (let i = 0; i < gone.length; i += MAX_OPS) await this.commitOne(gone.slice(i, i + MAX_OPS), []);
      for (let i = 0; i < added.length; i += MAX_OPS) await this.commitOne([], added.slice(i, i + MAX_OPS), i + MAX_OPS >= added.length ? covers : []);
      return;
    }
    if (gone.length + added.length + kept.length > MAX_OPS) throw new AppError('invalid', `cannot commit a manifest swap of ${gone.length + added.length} files in one etcd transaction (at most ${MAX_OPS}); lower compaction.max_files_per_batch`);
    await this.commitOne(gone, added, covers, kept);
  }

  private async commitOne(gone: readonly string[], added: readonly ManifestFile[], covers: readonly unknown[] = [], kept: readonly string[] = []): Promise<void> {
    const fence = this.fence();
    const registered = (p: string): Compare => ({ key: this.root + p, target: 'CREATE', result: 'GREATER', revision: 0 });
    const compare: Compare[] = [...gone.map(registered), ...kept.map(registered), ...(fence ? [fence] : [])];
    const ops: Op[] = [
      ...gone.map((p): Op => ({ delete: { key: this.root + p } })),
      ...added.map((f): Op => ({ put: { key: this.root + f.path, value: JSON.stringify(f) } })),
      // The head key's mod revision is the revision of the last manifest change, deletions included.
      { put: { key: this.headKey, value: '' } },
      ...(covers.length > 0 ? this.coverage(covers) : []),
    ];
    const r = await this.client.txn(compare, ops);
    if (!r.succeeded) {
      if (fence && !gone.length && !kept.length) this.onFenced();
      throw new AppError('conflict', 'cannot commit the manifest change: a file it replaces is no longer registered, or this node no longer holds its role');
    }
    await this.appliedUpTo(r.revision, gone, added);
  }

  /** Stops following changes. */
  close(): void {
    this.closed = true;
    if (this.snapshotTimer) clearInterval(this.snapshotTimer);
    this.w?.close();
    for (const w of this.waiters) w.resolve();
  }
}

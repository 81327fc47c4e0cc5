/**
 * The cluster's file manifest, owned by etcd: one key per data file under `<prefix>/manifest/files/`.
 * Every registration and every swap is one etcd transaction, except a change too large for one: that
 * is recorded whole as an intent first and applied in parts, and completes even if its node dies part
 * way (flush-intent.ts). Each node's SQLite manifest is a copy kept current by one watch, applied in
 * revision order. A committing node applies its own change through that same watch (it waits for its
 * revision), so one path orders every change.
 */
import { ChangeHandedOn, type FileManifestStore, type ManifestFile, type ManifestJournal } from '../catalog/index.ts';
import { AppError } from '../lib/errors.ts';
import { failpoint } from '../lib/failpoint.ts';
import { EtcdError, type Compare, type EtcdClient, type Op, type TxnResult } from './etcd/etcd-client.ts';
import { intentWrites, planIntent, readIntents, type Intent, type IntentPart, type Put } from './flush-intent.ts';
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
/** How long a recorded change keeps trying to reach etcd before it is left to the next primary. */
const SETTLE_MS = 30_000;
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
      const page = await this.client.getPrefixPaged(this.root, PAGE);
      revision = page.revision;
      for (const kv of page.kvs) files.push(JSON.parse(kv.value) as ManifestFile);
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


  /** The puts that record `covers` as flushed (the shared WAL's covered record), in the change that registers their files. */
  coverage: (covers: readonly unknown[]) => Put[] = () => [];

  /**
   * Commits a change in etcd (refused when a file it removes or changes in place is no longer
   * registered, or the fence fails). A change too large for one transaction goes through an intent
   * (see commitInParts), so it is never left half applied.
   */
  async commit(removed: readonly string[], added: readonly ManifestFile[], covers: readonly unknown[] = []): Promise<void> {
    const readded = new Set(added.map((f) => f.path));
    const gone = removed.filter((p) => !readded.has(p));
    // A file changed in place (tiering's switch to cold) must still be registered: without that check a
    // node whose copy lags would register again a file another node just removed (a delete's rewrite).
    const kept = removed.filter((p) => readded.has(p));
    if (gone.length + added.length === 0) return;
    const coverage = covers.length > 0 ? this.coverage(covers) : [];
    // Pure removals (a dropped database) and pure registrations (a flush over many hours) may go in parts.
    if (gone.length + added.length > MAX_OPS && kept.length === 0 && (gone.length === 0 || added.length === 0)) return this.commitInParts(gone, added, coverage);
    if (gone.length + added.length + kept.length > MAX_OPS) throw new AppError('invalid', `cannot commit a manifest swap of ${gone.length + added.length} files in one etcd transaction (at most ${MAX_OPS}); lower compaction.max_files_per_batch`);
    await this.commitOne(gone, added, coverage, kept);
  }

  private async commitOne(gone: readonly string[], added: readonly ManifestFile[], coverage: readonly Put[], kept: readonly string[]): Promise<void> {
    const fence = this.fence();
    const registered = (p: string): Compare => exists(this.root + p);
    const compare: Compare[] = [...gone.map(registered), ...kept.map(registered), ...(fence ? [fence] : [])];
    let r: TxnResult;
    try {
      r = await this.client.txn(compare, [...this.fileOps(gone, added), ...coverage.map((put): Op => ({ put }))]);
    } catch (err) {
      if (added.length === 0) throw err;
      // The answer was lost, not necessarily the transaction: the caller would delete files it may have
      // registered. etcd says whether it holds the first of them (each record names a unique path).
      let kv: Awaited<ReturnType<EtcdClient['get']>>;
      try {
        kv = await this.settle(() => this.client.get(this.root + added[0]!.path));
      } catch (unsettled) {
        throw new ChangeHandedOn(unsettled);
      }
      if (kv?.value !== JSON.stringify(added[0])) throw err;
      return this.appliedUpTo(kv.mod_revision, gone, added);
    }
    if (!r.succeeded) {
      if (fence && !gone.length && !kept.length) this.onFenced();
      throw new AppError('conflict', 'cannot commit the manifest change: a file it replaces is no longer registered, or this node no longer holds its role');
    }
    await this.appliedUpTo(r.revision, gone, added);
    failpoint('manifest.after_commit');
  }

  /** The operations that remove `gone` and register `added`, and move the head key. */
  private fileOps(gone: readonly string[], added: readonly ManifestFile[]): Op[] {
    return [
      ...gone.map((p): Op => ({ delete: { key: this.root + p } })),
      ...added.map((f): Op => ({ put: { key: this.root + f.path, value: JSON.stringify(f) } })),
      // The head key's mod revision is the revision of the last manifest change, deletions included.
      { put: { key: this.headKey, value: '' } },
    ];
  }

  /** This node's fence as the comparisons of a transaction. */
  private fenceCompares(): Compare[] {
    const fence = this.fence();
    return fence ? [fence] : [];
  }

  /** A transaction failed this node's fence: it no longer holds its role. */
  private fenced(): AppError {
    this.onFenced();
    return new AppError('conflict', 'cannot commit the manifest change: this node no longer holds its role');
  }

  /**
   * A change of more than one transaction: recorded whole first (an intent, see flush-intent.ts), then
   * applied part by part, its coverage with the last. Until the intent is recorded a failure changes
   * nothing (the caller may delete its files and try again); after, the change completes here or on
   * the next primary, and a failure here is ChangeHandedOn (the files must stay).
   */
  private async commitInParts(gone: readonly string[], added: readonly ManifestFile[], coverage: Put[]): Promise<void> {
    const intent = planIntent(this.prefix, gone, added, coverage);
    await this.recordIntent(intent);
    failpoint('manifest.after_intent');
    try {
      await this.completeIntent(intent);
    } catch (err) {
      throw new ChangeHandedOn(err);
    }
  }

  private async recordIntent(intent: Intent): Promise<void> {
    const writes = intentWrites(intent);
    for (const [i, ops] of writes.entries()) {
      let r: TxnResult;
      try {
        r = await this.client.txn(this.fenceCompares(), ops);
      } catch (err) {
        // Parts without their head are inert: only a lost answer to the head's write leaves the outcome open.
        if (i < writes.length - 1) throw err;
        return this.confirmHead(intent, err);
      }
      if (!r.succeeded) throw this.fenced();
    }
  }

  /**
   * The head's write got no answer: etcd says whether it holds the head, read under the fence (while
   * this node holds its role nobody else completes the intent, so an absent head was never written).
   */
  private async confirmHead(intent: Intent, lost: unknown): Promise<void> {
    let held: boolean;
    try {
      held = await this.settle(async () => {
        const r = await this.client.txn(this.fenceCompares(), [{ get: { key: intent.head } }]);
        if (!r.succeeded) throw this.fenced();
        return (r.reads[0]?.length ?? 0) > 0;
      });
    } catch (err) {
      // Recorded or not is unknown: a head that was written is completed by the next primary.
      throw new ChangeHandedOn(err);
    }
    if (!held) throw lost;
  }

  /**
   * Applies what is left of `intent`, then its coverage. Each step holds only while its key exists and
   * deletes it, so each is applied once whichever node takes it; a step another node took is skipped.
   */
  private async completeIntent(intent: Intent): Promise<void> {
    for (const part of intent.parts) await this.settle(() => this.applyPart(part));
    await this.settle(async () => {
      const r = await this.client.txn([...this.fenceCompares(), exists(intent.head)], [...intent.coverage.map((put): Op => ({ put })), { delete: { key: intent.dir, prefix: true } }], [{ get: { key: intent.head } }]);
      if (!r.succeeded && (r.reads[0]?.length ?? 0) > 0) throw this.fenced();
    });
  }

  private async applyPart(part: IntentPart): Promise<void> {
    const r = await this.client.txn([...this.fenceCompares(), exists(part.key)], [...this.fileOps(part.removed, part.added), { delete: { key: part.key } }], [{ get: { key: part.key } }]);
    if (!r.succeeded) {
      if ((r.reads[0]?.length ?? 0) > 0) throw this.fenced();
      return;
    }
    failpoint('manifest.after_chunk');
    await this.appliedUpTo(r.revision, part.removed, part.added);
  }

  /** Runs an idempotent step again while etcd does not answer, for at most SETTLE_MS; any other error ends it. */
  private async settle<T>(step: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + SETTLE_MS;
    for (let backoff = 100; ; backoff = Math.min(backoff * 2, 2000)) {
      try {
        return await step();
      } catch (err) {
        if (!(err instanceof EtcdError) || Date.now() > deadline) throw err;
        this.log.warn('cannot reach etcd to finish a recorded manifest change; trying again', { error: err.message, retry_ms: backoff });
        await Bun.sleep(backoff);
      }
    }
  }

  /**
   * Completes every change recorded and not finished (its node crashed or lost its role part way),
   * oldest first, and deletes parts whose head was never written. A new primary runs this before it
   * replays the shared WAL, so the replay sees the coverage those changes record. Returns how many.
   */
  async completeIntents(): Promise<number> {
    const { live, stray, unreadable } = await readIntents(this.client, this.prefix);
    if (unreadable.length > 0) this.log.error('manifest intent keys that cannot be read are skipped; the shared WAL replay may store their rows again', { keys: unreadable.slice(0, 10), count: unreadable.length });
    for (const intent of live) {
      this.log.warn('completing a manifest change recorded by a node that did not finish it', { intent: intent.id, parts_left: intent.parts.length });
      await this.completeIntent(intent);
    }
    for (let i = 0; i < stray.length; i += MAX_OPS) {
      const r = await this.client.txn(this.fenceCompares(), stray.slice(i, i + MAX_OPS).map((key): Op => ({ delete: { key } })));
      if (!r.succeeded) throw this.fenced();
    }
    return live.length;
  }

  /** Stops following changes. */
  close(): void {
    this.closed = true;
    if (this.snapshotTimer) clearInterval(this.snapshotTimer);
    this.w?.close();
    for (const w of this.waiters) w.resolve();
  }
}

/** Holds while `key` exists. */
const exists = (key: string): Compare => ({ key, target: 'CREATE', result: 'GREATER', revision: 0 });

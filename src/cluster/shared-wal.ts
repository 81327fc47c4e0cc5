/**
 * The primary writer's write-ahead log beyond its own disk. Writes wait in a group: a group is
 * committed at once when no commit runs, else as soon as the running one ends, so every write that
 * arrived meanwhile shares one commit (adaptive group commit: the busier the log, the bigger the
 * groups, the fewer objects and transactions per write), and at the latest every `groupCommitMs`.
 * Each write is encoded and compressed when it is queued, off the event loop, so a commit only joins
 * ready frames. A group is put into the bucket as one segment object, then registered in
 * etcd by a transaction guarded by the writer election (the fence); only then are its writes
 * acknowledged. A flush records the entries it covers in the transaction that registers its files,
 * so a new primary replays exactly the entries no registered file holds. A fenced registration proves
 * the node lost its primacy: the group is refused (nothing of it is registered, so the caller may
 * retry on the new primary) and the node is told to step down. A registration whose answer was lost
 * (etcd without quorum, a member stalled) is settled before the group is answered: it is acknowledged
 * if etcd holds it, else withdrawn, so a 503 never turns into a stored write later.
 */
import type { ColumnBatch } from '../ingest/index.ts';
import { AppError, messageOf } from '../lib/errors.ts';
import type { ObjectStore } from '../storage/index.ts';
import type { Compare, EtcdClient, Op } from './etcd/etcd-client.ts';
import type { Put } from './flush-intent.ts';
import { coveredPut, decodeSegment, encodeEntry, encodeSegment, fullyCovered, readSharedWal, SharedTicket, SharedWalKeys, withdrawnValue } from './shared-wal-state.ts';

interface Log {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface SharedWalOptions {
  client: EtcdClient;
  store: ObjectStore;
  prefix: string;
  clusterName: string;
  nodeId: string;
  /** 50-100 ms: the longest a write waits for its group to be committed, plus the commit itself. */
  groupCommitMs: number;
  /** How often the primary deletes fully covered segments. */
  collectMs?: number;
  /** The comparison that holds only while this node is the primary writer; throws when it is not. */
  fence(): Compare;
  /** A registration was fenced: this node is no longer primary. */
  onFenced(reason: string): void;
  /** Segments not yet fully covered, after each collection. */
  onPending?(segments: number): void;
  /** A take-over found a segment it cannot replay (its object is missing or not a segment). */
  onUnreadable?(): void;
  /** A registration etcd did not answer was withdrawn: its writes are not stored. */
  onWithdrawn?(): void;
  /** A group was committed: its writes, segment bytes, PUT time, and time from the start of the commit to its registration. */
  onCommit?(c: { entries: number; bytes: number; putMs: number; totalMs: number }): void;
  log: Log;
}

/**
 * Commits in flight at once. One: with two, the next group started while the previous one registered,
 * so groups stayed at about one write and each write paid a whole PUT and transaction (measured: more
 * CPU per write in svc, the object store and etcd, and lower throughput than one commit at a time).
 */
const MAX_COMMITS = 1;
/** Collection ticks without a flush between two passes that only refresh the pending gauge. */
const IDLE_COLLECT_EVERY = 10;
/** etcd refuses transactions of more than 128 operations by default. */
const MAX_OPS = 100;

/**
 * The 503 of a write certainly not stored: this node is not (or no longer) the primary, or the write's
 * registration was withdrawn; safe to send again to the primary.
 */
export function notPrimary(message: string): AppError {
  return new AppError('unavailable', message, { headers: { 'Retry-After': '1', [NOT_PRIMARY_HEADER]: '1' } });
}

/** Marks a 503 whose write was certainly not stored, so a forwarding node may send it to the new primary. */
export const NOT_PRIMARY_HEADER = 'x-svc-not-primary';

/** How a segment's registration ended. */
type Outcome = 'registered' | 'withdrawn' | 'fenced';

/** Holds while `key` does not exist (it was never created, or was deleted). */
const absent = (key: string): Compare => ({ key, target: 'CREATE', result: 'EQUAL', revision: 0 });

/**
 * How long a write whose registration went unanswered waits for it to be settled; past that it is
 * answered 503 as "may or may not be stored" and settling goes on in the background.
 */
const SETTLE_MS = 2000;
/** Between two attempts to settle a registration while etcd cannot answer. */
const SETTLE_RETRY_MS = 250;
/**
 * How long a withdrawal is kept: a registration still on its way to etcd (held in a stalled member or
 * a connection) must find it there. Far beyond any request timeout of etcd or of this client.
 */
const WITHDRAWN_KEEP_MS = 10 * 60_000;

interface Waiting {
  /** The entry's frame of the segment, compressed while the write waits for its group. */
  frame: Promise<Uint8Array>;
  resolve(t: SharedTicket): void;
  reject(err: unknown): void;
}

/** See the file comment. */
export class SharedWal {
  readonly keys: SharedWalKeys;
  private pending: Waiting[] = [];
  /** Commits running now (at most MAX_COMMITS). */
  private readonly committing = new Set<Promise<void>>();
  private kick = false;
  private seq = 0;
  private readonly boot = crypto.randomUUID().slice(0, 8);
  private term = 0;
  /** Writes the next group waits for: those of the last cycle (its group and what queued behind it). */
  private expect = 1;
  /** When the oldest queued write arrived, or the last commit ended if later (performance.now()). */
  private oldest = 0;
  private linger: ReturnType<typeof setTimeout> | null = null;
  private collectTimer: ReturnType<typeof setInterval> | null = null;
  /** A flush covered entries (or this node took over) since the last collection. */
  private collectDue = true;
  private closed = false;
  /** Segment keys of writes answered 503 whose registration is not yet settled: their value and object. */
  private readonly unsettled = new Map<string, { value: string; object: string }>();

  constructor(private readonly opts: SharedWalOptions) {
    this.keys = new SharedWalKeys(opts.prefix);
  }

  /** Queues one batch; resolves with its ticket once its segment is registered (then the write may be acknowledged). */
  append(database: string, batch: ColumnBatch): Promise<SharedTicket> {
    const frame = encodeEntry(database, batch);
    // A failure is the group's: its commit awaits the frame and refuses every write of the group.
    frame.catch(() => {});
    if (this.pending.length === 0) this.oldest = performance.now();
    const ticket = new Promise<SharedTicket>((resolve, reject) => this.pending.push({ frame, resolve, reject }));
    // Writes of one task (a request's batches, concurrent requests) join the same group.
    if (this.committing.size < MAX_COMMITS && !this.kick) {
      this.kick = true;
      queueMicrotask(() => {
        this.kick = false;
        this.maybeCommit();
      });
    }
    return ticket;
  }

  /** True while `ticket` was issued in the current primary term (rows of a fenced term are not buffered). */
  current(ticket: SharedTicket): boolean {
    return ticket.term === this.term;
  }

  /** Ends the current term: tickets issued so far are no longer current. */
  endTerm(): void {
    this.term++;
  }

  /** Resolves once every queued write has been committed or refused. */
  async drain(): Promise<void> {
    while (this.pending.length > 0 || this.committing.size > 0) {
      this.commit();
      await Promise.race(this.committing);
    }
  }

  /**
   * Commits the queue once it holds as many writes as the last cycle had (the writers released by the
   * last commit come back: committing without them would split steady writers into two half-size
   * cohorts, each paying a whole PUT and transaction), or `groupCommitMs` after its oldest write
   * arrived or the commit slot freed, whichever is later, so a writer that went away delays the next
   * group by at most that.
   */
  private maybeCommit(): void {
    if (this.committing.size >= MAX_COMMITS || this.pending.length === 0) return;
    const waited = performance.now() - this.oldest;
    if (this.pending.length >= this.expect || waited >= this.opts.groupCommitMs) return this.commit();
    this.linger ??= setTimeout(() => {
      this.linger = null;
      this.maybeCommit();
    }, this.opts.groupCommitMs - waited);
  }

  private commit(): void {
    if (this.committing.size >= MAX_COMMITS || this.pending.length === 0) return;
    if (this.linger) clearTimeout(this.linger);
    this.linger = null;
    const group = this.pending;
    this.pending = [];
    const running: Promise<void> = this.commitGroup(group).finally(() => {
      this.committing.delete(running);
      this.expect = group.length + this.pending.length;
      this.oldest = performance.now();
      // What arrived during this commit goes next, once the writers this one released are back.
      this.maybeCommit();
    });
    this.committing.add(running);
  }

  private async commitGroup(group: Waiting[]): Promise<void> {
    const term = this.term;
    const id = `${this.opts.nodeId}-${this.boot}-${++this.seq}`;
    const object = `_cluster/${this.opts.clusterName}/wal/${id}.seg`;
    let put = false;
    const started = performance.now();
    try {
      const fence = this.opts.fence();
      const segment = encodeSegment(await Promise.all(group.map((w) => w.frame)));
      const putStarted = performance.now();
      await this.opts.store.put(object, segment);
      const putMs = performance.now() - putStarted;
      put = true;
      const key = this.keys.segment(id);
      const value = JSON.stringify({ object, entries: group.length, node: this.opts.nodeId, created_at: new Date().toISOString() });
      let outcome: Outcome;
      try {
        // Only while the key is absent: a withdrawal (below) written first makes this fail for good.
        const r = await this.opts.client.txn([fence, absent(key)], [{ put: { key, value } }], [{ get: { key } }]);
        // Failed with our value in place: an earlier attempt of the client's (another endpoint) went through.
        outcome = r.succeeded || r.reads[0]?.[0]?.value === value ? 'registered' : 'fenced';
      } catch (err) {
        // The answer was lost, not necessarily the transaction: settle which it was before answering.
        outcome = await this.settle(key, value, object, err);
      }
      if (outcome === 'withdrawn') {
        this.opts.onWithdrawn?.();
        throw notPrimary('cannot reach an etcd quorum to register the write in the shared WAL; it was withdrawn and is not stored: retry');
      }
      if (outcome === 'fenced') {
        this.opts.onFenced('a shared WAL registration was fenced: another node holds the writer election');
        throw notPrimary('this node is no longer the primary writer; the write was not stored: retry (it goes to the new primary)');
      }
      this.opts.onCommit?.({ entries: group.length, bytes: segment.length, putMs, totalMs: performance.now() - started });
      group.forEach((w, i) => w.resolve(new SharedTicket(id, i, term)));
    } catch (err) {
      const refusal = err instanceof AppError ? err : new AppError('unavailable', `cannot commit the shared WAL: ${messageOf(err)}; the write was not acknowledged, retry`, { headers: { 'Retry-After': '1' } });
      for (const w of group) w.reject(refusal);
      if (put && refusal.headers?.[NOT_PRIMARY_HEADER]) void this.opts.store.delete(object).catch(() => false);
    }
  }

  /**
   * Decides a registration whose answer was lost: etcd either holds it (the write is stored and may be
   * acknowledged) or it is withdrawn, by a transaction that holds only while the key is absent, so the
   * registration fails should it still reach etcd. Tries for SETTLE_MS; past that the write is answered
   * 503 and settling goes on in the background, which also withdraws the registration if it finds one:
   * a refused write must not turn up stored later, doubled by the client's retry.
   */
  private async settle(key: string, value: string, object: string, cause: unknown): Promise<Outcome> {
    const deadline = performance.now() + SETTLE_MS;
    for (let left = SETTLE_MS; left > 0 && !this.closed; left = deadline - performance.now()) {
      // An attempt etcd holds past the deadline goes on unawaited; the background settles it anyway.
      const outcome = await Promise.race([this.settleOnce(key, value).catch(() => null), Bun.sleep(left).then(() => null)]);
      if (outcome) return outcome;
      await Bun.sleep(Math.min(SETTLE_RETRY_MS, Math.max(0, deadline - performance.now())));
    }
    void this.withdrawLater(key, value, object);
    throw new AppError('unavailable', `cannot reach an etcd quorum to register the write in the shared WAL (${messageOf(cause)}): it is not acknowledged; it is withdrawn once etcd answers again, unless another primary took over by then: retry`, { headers: { 'Retry-After': '1' } });
  }

  /** One attempt to settle a registration: withdraws it if etcd does not hold it. */
  private async settleOnce(key: string, value: string): Promise<Exclude<Outcome, 'fenced'>> {
    const r = await this.opts.client.txn([absent(key)], [{ put: { key, value: withdrawnValue(this.opts.nodeId) } }], [{ get: { key } }]);
    // A value other than ours is our own withdrawal, written by an attempt whose answer was lost.
    return r.succeeded || r.reads[0]?.[0]?.value !== value ? 'withdrawn' : 'registered';
  }

  /**
   * Settles a registration in the background once etcd answers. A registered one is withdrawn under the
   * fence while this node leads; when it does not, it stays in `unsettled`, so this node's replay, should
   * it lead again, withdraws it rather than store it (another node's take-over would store it).
   */
  private async withdrawLater(key: string, value: string, object: string): Promise<void> {
    this.unsettled.set(key, { value, object });
    while (!this.closed && this.unsettled.has(key)) {
      try {
        if ((await this.settleOnce(key, value)) === 'withdrawn') return this.withdrawn(key, object);
        let fence: Compare;
        try {
          fence = this.opts.fence();
        } catch {
          this.opts.log.warn('a write answered 503 while etcd could not answer is registered, and this node does not lead: it is withdrawn if this node leads again, else stored by the node that takes over', { segment: key });
          return;
        }
        if (await this.withdrawRegistered(key, value, fence)) return this.withdrawn(key, object);
        this.opts.log.warn('a write answered 503 while etcd could not answer is stored: another primary took over before this node could withdraw it', { segment: key });
        return;
      } catch {
        await Bun.sleep(1000);
      }
    }
  }

  /** Replaces a registration (still `value`) with a withdrawal, under `fence`; false when the fence fails. */
  private async withdrawRegistered(key: string, value: string, fence: Compare): Promise<boolean> {
    return (await this.opts.client.txn([fence, { key, target: 'VALUE', result: 'EQUAL', value }], [{ put: { key, value: withdrawnValue(this.opts.nodeId) } }])).succeeded;
  }

  /** A refused write's registration is withdrawn for good: its object is litter now. */
  private withdrawn(key: string, object: string): void {
    // The replay and the background may both get there: it is reported once.
    if (!this.unsettled.delete(key)) return;
    this.opts.log.info('a write answered 503 while etcd could not answer is withdrawn: it is not stored', { segment: key });
    this.opts.onWithdrawn?.();
    void this.opts.store.delete(object).catch(() => false);
  }

  /** The put that records `tickets` as flushed, for the change that registers their files. */
  coverage(tickets: readonly unknown[]): Put[] {
    const put = coveredPut(this.keys, tickets);
    if (put) this.collectDue = true;
    return put ? [put] : [];
  }

  /**
   * On taking over as primary: hands every entry no registered file covers to `apply`, oldest
   * segment first, with the ticket a flush of it must cover. Returns the entries replayed.
   */
  async replay(apply: (database: string, batches: ColumnBatch[], ticket: SharedTicket) => void): Promise<number> {
    this.term++;
    this.collectDue = true;
    const state = await readSharedWal(this.opts.client, this.keys);
    let replayed = 0;
    for (const { id, record } of state.segments) {
      if (fullyCovered(state, id, record.entries)) continue;
      // A write this node answered 503 whose registration went through: withdrawn, not replayed.
      const refused = this.unsettled.get(this.keys.segment(id));
      if (refused) {
        if (!(await this.withdrawRegistered(this.keys.segment(id), refused.value, this.opts.fence()))) throw new Error('fenced while withdrawing a refused write from the shared WAL');
        this.withdrawn(this.keys.segment(id), refused.object);
        continue;
      }
      const done = state.covered.get(id);
      // A failed read is retried (the take-over is attempted again); an object that is missing or not a
      // segment can never be replayed, and must not keep the cluster without a primary for ever. Its
      // key stays (the pending gauge shows it) and so does the object, for an operator to look at.
      const bytes = await this.opts.store.get(record.object).catch((err: unknown) => {
        if (err instanceof AppError && err.kind === 'not_found') return null;
        throw err;
      });
      let entries: ReturnType<typeof decodeSegment> | null = null;
      let problem = 'its object does not exist';
      if (bytes !== null) {
        try {
          entries = decodeSegment(bytes);
        } catch (err) {
          problem = messageOf(err);
        }
      }
      if (entries === null) {
        this.opts.log.error('a shared WAL segment cannot be replayed; its unflushed entries are lost', { segment: id, object: record.object, error: problem });
        this.opts.onUnreadable?.();
        continue;
      }
      entries.forEach((e, i) => {
        if (done?.has(i)) return;
        apply(e.database, e.batches, new SharedTicket(id, i, this.term));
        replayed++;
      });
    }
    if (replayed > 0) this.opts.log.info('replayed the shared WAL entries of the previous primary', { entries: replayed, segments: state.segments.length });
    return replayed;
  }

  /** Starts deleting fully covered segments (and their covered keys and objects) while `isPrimary()`. */
  startCollecting(isPrimary: () => boolean): void {
    let idle = 0;
    this.collectTimer = setInterval(() => {
      // Segments become collectable only when a flush covers them: between flushes a pass (two
      // reads of every pending key) would find nothing, so it runs then only to refresh the gauge.
      if (!isPrimary() || (!this.collectDue && ++idle < IDLE_COLLECT_EVERY)) return;
      idle = 0;
      this.collectDue = false;
      void this.collect().catch((err) => {
        this.collectDue = true;
        this.opts.log.warn('cannot collect shared WAL segments; retried', { error: messageOf(err) });
      });
    }, this.opts.collectMs ?? 1000);
  }

  /** One collection pass; returns the segments still pending. */
  async collect(): Promise<number> {
    const s = await readSharedWal(this.opts.client, this.keys);
    const gone = new Set(s.segments.filter((x) => fullyCovered(s, x.id, x.record.entries)).map((x) => x.id));
    const live = new Set(s.segments.map((x) => x.id));
    const ops: Op[] = [...gone].map((id): Op => ({ delete: { key: this.keys.segment(id) } }));
    for (const c of s.coveredKeys) if (c.segments.every((id) => gone.has(id) || !live.has(id))) ops.push({ delete: { key: c.key } });
    // A withdrawal whose time cannot be read (NaN) counts as old enough.
    for (const w of s.withdrawn) if (!(Date.now() - w.at < WITHDRAWN_KEEP_MS)) ops.push({ delete: { key: w.key } });
    for (let i = 0; i < ops.length; i += MAX_OPS) {
      const r = await this.opts.client.txn([this.opts.fence()], ops.slice(i, i + MAX_OPS));
      if (!r.succeeded) return s.segments.length - gone.size;
    }
    // One request for every collected object (not a check and a delete per segment): the object store
    // is as busy as the writes it takes. Their keys are gone, so an object left behind is only litter.
    const objects = s.segments.filter((x) => gone.has(x.id)).map((x) => x.record.object);
    await this.opts.store.deleteMany(objects).catch((err) => this.opts.log.warn('cannot delete collected shared WAL segment objects; they are no longer registered and can be removed by hand', { objects: objects.length, error: messageOf(err) }));
    const pending = s.segments.length - gone.size;
    this.opts.onPending?.(pending);
    return pending;
  }

  /** Stops the timers; queued writes are refused. */
  close(): void {
    this.closed = true;
    if (this.linger) clearTimeout(this.linger);
    if (this.collectTimer) clearInterval(this.collectTimer);
    for (const w of this.pending) w.reject(notPrimary('this node is stopping; the write was not stored: retry'));
    this.pending = [];
  }
}

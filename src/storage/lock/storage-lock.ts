/**
 * One server per storage: the lock taken at start on the data folder, bucket prefix or container
 * prefix. The record names its owner and carries a heartbeat renewed every third of its expiry; a
 * record whose heartbeat is older than its expiry (or whose process on this host is gone) is stale and
 * taken over with a warning. A second server that finds a live record refuses to start, naming it.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { messageOf, StartupError } from '../../lib/errors.ts';
import type { LockSlot } from './lock-slot.ts';

const lockRecord = z.object({
  owner: z.string(),
  host: z.string(),
  pid: z.number().int(),
  started_at: z.string(),
  heartbeat_at: z.string(),
  expiry_ms: z.number().int().positive(),
});

/** The stored record: who holds the storage and until when it counts as alive. */
export type LockRecord = z.infer<typeof lockRecord>;

/** What the lock needs from its surroundings; `now` and `alive` are injectable for tests. */
export interface StorageLockOptions {
  expiryMs: number;
  logger: { warn(msg: string, fields?: Record<string, unknown>): void; error(msg: string, fields?: Record<string, unknown>): void };
  now?: () => number;
  /** Whether a process of this host still runs. */
  alive?: (pid: number) => boolean;
}

/** Thrown when another live server holds the storage: a start-up error (exit code 2). */
export class StorageLockedError extends StartupError {
  constructor(
    readonly holder: LockRecord | null,
    location: string,
  ) {
    super('locked', `the storage is in use by another server: ${describe(holder)} holds ${location}; stop it first (a lock whose holder died is taken over once its heartbeat is older than its expiry)`);
  }
}

function describe(r: LockRecord | null): string {
  if (!r) return 'an unreadable lock record';
  return `${r.owner} (host ${r.host}, pid ${r.pid}, started ${r.started_at}, last heartbeat ${r.heartbeat_at}, expiry ${r.expiry_ms} ms)`;
}

function parse(text: string): LockRecord | null {
  try {
    const r = lockRecord.safeParse(JSON.parse(text));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}

/** A held storage lock: renewed in the background until `release`. */
export class StorageLock {
  private version: string;
  private record: LockRecord;
  private timer: ReturnType<typeof setInterval> | null = null;
  private lost = false;

  private constructor(
    private readonly slot: LockSlot,
    private readonly opts: StorageLockOptions,
    record: LockRecord,
    version: string,
  ) {
    this.record = record;
    this.version = version;
  }

  /** Takes the lock or throws StorageLockedError; storage failures are thrown as they are. */
  static async acquire(slot: LockSlot, opts: StorageLockOptions): Promise<StorageLock> {
    const now = opts.now ?? Date.now;
    const at = new Date(now()).toISOString();
    const host = hostname();
    const record: LockRecord = { owner: `${host}:${process.pid}:${randomBytes(4).toString('hex')}`, host, pid: process.pid, started_at: at, heartbeat_at: at, expiry_ms: opts.expiryMs };
    const text = JSON.stringify(record);
    const existing = await slot.read();
    let version: string | null;
    if (!existing) version = await slot.create(text);
    else {
      const held = parse(existing.text);
      const why = held ? staleness(held, now(), opts.alive ?? pidAlive) : 'the record is unreadable';
      if (!why) throw new StorageLockedError(held, slot.location);
      opts.logger.warn('taking over a stale storage lock', { lock: slot.location, previous_owner: held?.owner ?? null, reason: why });
      version = await slot.replace(text, existing.version);
    }
    // Read back: a store that ignores write conditions (s3rver) shows here who won a race.
    const after = await slot.read();
    const winner = after ? parse(after.text) : null;
    if (version === null || !after || winner?.owner !== record.owner) throw new StorageLockedError(winner, slot.location);
    const lock = new StorageLock(slot, opts, record, after.version);
    lock.timer = setInterval(() => void lock.heartbeat(), Math.max(50, Math.floor(opts.expiryMs / 3)));
    lock.timer.unref?.();
    return lock;
  }

  /** True once another server took the lock over (this one's heartbeat went stale). */
  get isLost(): boolean {
    return this.lost;
  }

  /** Renews the heartbeat; a failed renewal is retried at the next tick, a lost lock is reported once. */
  async heartbeat(): Promise<void> {
    if (this.lost) return;
    const next = { ...this.record, heartbeat_at: new Date((this.opts.now ?? Date.now)()).toISOString() };
    try {
      const version = await this.slot.replace(JSON.stringify(next), this.version);
      if (version === null) {
        this.lost = true;
        this.opts.logger.error('the storage lock was taken by another server; this server must stop writing', { lock: this.slot.location });
        return;
      }
      this.record = next;
      this.version = version;
    } catch (err) {
      this.opts.logger.warn('cannot renew the storage lock; retrying', { lock: this.slot.location, error: messageOf(err) });
    }
  }

  /** Stops renewing and removes the record (when it is still ours). */
  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (!this.lost) await this.slot.remove(this.version).catch(() => undefined);
  }
}

/** Why a record no longer counts, or null while its holder is alive. */
function staleness(r: LockRecord, nowMs: number, alive: (pid: number) => boolean): string | null {
  const age = nowMs - Date.parse(r.heartbeat_at);
  if (!(age <= r.expiry_ms)) return `its last heartbeat is ${Math.round(age)} ms old, past its expiry of ${r.expiry_ms} ms`;
  if (r.host === hostname() && r.pid !== process.pid && !alive(r.pid)) return `process ${r.pid} on this host is gone`;
  return null;
}

/**
 * With failover off a cluster writer acknowledges from its own WAL (main.ts), but its flushes are
 * registered in etcd: in one transaction, or over several through a flush intent that the next holder
 * completes after a crash. Releasing the flushed entries in the local WAL cannot be part of either, so
 * a crash between the registration and the release record would replay rows that registered files
 * already hold. The transaction that registers a flush (an intent's last one) therefore also records
 * the local WAL entries it holds, under `<prefix>/local-wal/<node>/<uuid>`; at start the node's replay
 * skips those entries and the ones a live intent's head will record. A record is deleted once its
 * entries are released and a sweep later, when their release records are on disk.
 */
import { z } from 'zod';
import { messageOf } from '../lib/errors.ts';
import { entryId, type WalTicket } from '../wal/index.ts';
import type { EtcdClient } from './etcd/etcd-client.ts';
import { parseJson, readIntents, type Put } from './flush-intent.ts';

interface Log {
  warn(msg: string, fields?: Record<string, unknown>): void;
}

const record = z.object({ entries: z.array(z.string()) });

/** A ticket of this node's WAL (a shared WAL ticket names its segment by a string). */
function isLocalTicket(t: unknown): t is WalTicket {
  return typeof t === 'object' && t !== null && typeof (t as WalTicket).segment === 'number' && typeof (t as WalTicket).offset === 'number';
}

/** See the file comment. */
export class LocalWalCoverage {
  readonly root: string;
  private sweeper: ReturnType<typeof setInterval> | null = null;
  /** Records whose entries were all released at the last sweep: deleted at the next one. */
  private due = new Set<string>();

  constructor(
    private readonly client: EtcdClient,
    private readonly prefix: string,
    nodeId: string,
    /** True while the local WAL still holds the entry unreleased. */
    private readonly holds: (entry: string) => boolean,
    private readonly log: Log,
  ) {
    this.root = `${prefix}/local-wal/${nodeId}/`;
  }

  /** The put that records the local WAL entries among `tickets`, for the transaction that registers their files. */
  coverage(tickets: readonly unknown[]): Put[] {
    const entries = tickets.filter(isLocalTicket).map(entryId);
    return entries.length > 0 ? [{ key: this.root + crypto.randomUUID(), value: JSON.stringify({ entries }) }] : [];
  }

  /** Every entry of this node's WAL that registered files hold or a live intent will register: replay skips them. */
  async covered(): Promise<Set<string>> {
    const out = new Set<string>();
    const add = (value: string) => {
      const r = record.safeParse(parseJson(value));
      if (r.success) for (const e of r.data.entries) out.add(e);
    };
    for (const kv of (await this.client.getPrefixPaged(this.root)).kvs) add(kv.value);
    for (const intent of (await readIntents(this.client, this.prefix)).live) for (const put of intent.coverage) if (put.key.startsWith(this.root)) add(put.value);
    return out;
  }

  /** Deletes, every `everyMs`, the records whose entries were already all released at the sweep before. */
  startSweeping(everyMs = 5000): void {
    this.sweeper = setInterval(() => void this.sweep().catch((err) => this.log.warn('cannot delete local WAL coverage records; retried', { error: messageOf(err) })), everyMs);
  }

  /** One sweep; returns the records deleted. */
  async sweep(): Promise<number> {
    const kvs = (await this.client.getPrefixPaged(this.root)).kvs;
    const released = kvs.filter((kv) => {
      const r = record.safeParse(parseJson(kv.value));
      return !r.success || r.data.entries.every((e) => !this.holds(e));
    });
    // Released at two sweeps in a row: the release records were synced in between (the WAL syncs every 100 ms).
    const gone = released.filter((kv) => this.due.has(kv.key)).map((kv) => kv.key);
    this.due = new Set(released.filter((kv) => !this.due.has(kv.key)).map((kv) => kv.key));
    for (const key of gone) await this.client.delete(key);
    return gone.length;
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }
}

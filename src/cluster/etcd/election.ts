/**
 * Leader election on etcd, the recipe of etcd's own concurrency package: each candidate puts
 * `<prefix>/<lease id>` under its lease; the candidate whose key has the lowest create revision
 * leads; every other one waits for its predecessor's key to go. A leader's key and its create
 * revision are its fencing token: a write guarded by `fence()` fails once the leadership is gone.
 * A candidate's value names its node: a key with the same value under an older lease is that node's
 * own earlier candidacy (a lease it lost, or a process of it that died), which it deletes instead of
 * waiting behind it, so a lone node that lost its lease leads again at once.
 */
import type { Compare, EtcdClient, Op } from './etcd-client.ts';
import { watch } from './watch.ts';
import type { KeyValue } from './wire.ts';

/** The current leader of an election, as etcd stores it. */
export interface Leader {
  key: string;
  value: string;
  revision: number;
}

/** Reads the leader of the election under `prefix`, or null when nobody campaigns. */
export async function readLeader(client: EtcdClient, prefix: string): Promise<Leader | null> {
  return leaderOf((await client.getPrefix(`${prefix}/`)).kvs);
}

/** The leader among the candidate keys of one election (every key under its prefix), or null. */
export function leaderOf(kvs: readonly KeyValue[]): Leader | null {
  const first = lowest(kvs);
  return first ? { key: first.key, value: first.value, revision: first.create_revision } : null;
}

function lowest(kvs: readonly KeyValue[]): KeyValue | null {
  let best: KeyValue | null = null;
  for (const kv of kvs) if (!best || kv.create_revision < best.create_revision) best = kv;
  return best;
}

/** The candidate's key is gone: its lease expired (or it was deleted), so it no longer stands. */
export class CandidacyGone extends Error {}

/** One candidate's place in an election. */
export class Candidacy {
  private closed = false;
  private constructor(
    private readonly client: EtcdClient,
    readonly prefix: string,
    readonly key: string,
    readonly revision: number,
    /** The node this candidacy stands for. */
    readonly value: string,
  ) {}

  /** Enters the election (idempotent for the same lease) without waiting to win. */
  static async enter(client: EtcdClient, prefix: string, leaseId: string, value: string): Promise<Candidacy> {
    const key = `${prefix}/${leaseId}`;
    const r = await client.txn([{ key, target: 'CREATE', result: 'EQUAL', revision: 0 }], [{ put: { key, value, lease: leaseId } }], [{ get: { key } }]);
    const revision = r.succeeded ? r.revision : r.reads[0]![0]!.create_revision;
    return new Candidacy(client, prefix, key, revision, value);
  }

  /**
   * Waits until this candidate leads (its predecessors' keys are gone), or `signal` aborts; true when it
   * waited behind another node. The watch on a predecessor is backed by a fresh read every `recheckMs`,
   * so a watch stream that went silent cannot keep a candidate waiting behind a key that is gone.
   */
  async won(signal?: AbortSignal, recheckMs = 5000): Promise<boolean> {
    for (let waited = false; ; ) {
      if (signal?.aborted || this.closed) throw new Error('the campaign was abandoned');
      const { kvs, revision } = await this.client.getPrefix(`${this.prefix}/`);
      if (!kvs.some((kv) => kv.key === this.key)) throw new CandidacyGone('the candidate key is gone (its lease expired)');
      const before = kvs.filter((kv) => kv.create_revision < this.revision);
      const own = before.filter((kv) => kv.value === this.value);
      if (own.length > 0) {
        // This node's own earlier candidacies: that term already ended here, so nothing is waited for.
        for (const kv of own) await this.client.txn([{ key: kv.key, target: 'CREATE', result: 'EQUAL', revision: kv.create_revision }], [{ delete: { key: kv.key } }]);
        continue;
      }
      if (before.length === 0) return waited;
      waited = true;
      // Wait for the nearest predecessor to go, then look again (it may have been the leader or not).
      const pred = before.reduce((a, b) => (a.create_revision > b.create_revision ? a : b));
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(recheck);
          signal?.removeEventListener('abort', done);
          w.close();
          resolve();
        };
        const w = watch(this.client, pred.key, { fromRevision: revision + 1 }, {
          onEvents: (events) => {
            if (events.some((e) => e.type === 'DELETE')) done();
          },
          onCompacted: done,
        });
        const recheck = setTimeout(done, recheckMs);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** The comparison that holds only while this candidate's key is the one it created (fencing). */
  fence(): Compare {
    return { key: this.key, target: 'CREATE', result: 'EQUAL', revision: this.revision };
  }

  /** True while this candidate leads, as etcd sees it now. */
  async isLeader(): Promise<boolean> {
    const leader = await readLeader(this.client, this.prefix);
    return leader?.key === this.key && leader.revision === this.revision;
  }

  /** Leaves the election (a leader hands over to the next candidate at once), with `also` in the same transaction. */
  async resign(also: Op[] = []): Promise<void> {
    this.closed = true;
    await this.client.txn([this.fence()], [{ delete: { key: this.key } }, ...also]);
  }
}

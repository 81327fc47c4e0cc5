/**
 * Cluster membership in etcd. Each node keeps two keys: `nodes/<id>`, its record (kept after it
 * dies, so operators see dead nodes until they remove them), and `alive/<id>`, held by the node's
 * lease, whose disappearance is the definition of dead. Heartbeats rewrite the record's time.
 */
import type { EtcdClient } from './etcd/etcd-client.ts';
import type { KeyValue } from './etcd/wire.ts';
import { nodeRecordSchema, observedState, type NodeRecord, type NodeState, type Role } from './node-record.ts';

export interface MembershipOptions {
  client: EtcdClient;
  prefix: string;
  heartbeatMs: number;
  self: { id: string; role: Role; address: string; version: string };
  now?: () => number;
}

/** This node's membership: register, heartbeat, leave; and the view of every node. */
export class Membership {
  private record: NodeRecord;
  private readonly now: () => number;

  constructor(private readonly opts: MembershipOptions) {
    this.now = opts.now ?? Date.now;
    const at = new Date(this.now()).toISOString();
    this.record = { ...opts.self, state: 'joining', started_at: at, last_heartbeat: at };
  }

  private key(kind: 'nodes' | 'alive', id: string): string {
    return `${this.opts.prefix}/${kind}/${id}`;
  }

  /** Registers this node as `joining` under `leaseId`. */
  async register(leaseId: string): Promise<void> {
    await this.opts.client.txn([], [
      { put: { key: this.key('nodes', this.record.id), value: JSON.stringify(this.record) } },
      { put: { key: this.key('alive', this.record.id), value: this.record.started_at, lease: leaseId } },
    ]);
  }

  /** Renews the record's heartbeat time, moving to `state` when given. */
  async heartbeat(state?: NodeState): Promise<void> {
    this.record = { ...this.record, ...(state ? { state } : {}), last_heartbeat: new Date(this.now()).toISOString() };
    await this.opts.client.put(this.key('nodes', this.record.id), JSON.stringify(this.record));
  }

  /**
   * A heartbeat that also reads every node and every key under each of `prefixes`, in one
   * transaction: one etcd request per heartbeat instead of a put and a read per prefix (each request
   * through the JSON gateway costs the etcd members a few ms of CPU, and every node beats every second).
   */
  async heartbeatAndRead(state: NodeState | undefined, prefixes: readonly string[]): Promise<{ nodes: NodeRecord[]; reads: KeyValue[][] }> {
    this.record = { ...this.record, ...(state ? { state } : {}), last_heartbeat: new Date(this.now()).toISOString() };
    const r = await this.opts.client.txn(
      [],
      [
        { put: { key: this.key('nodes', this.record.id), value: JSON.stringify(this.record) } },
        ...[`${this.opts.prefix}/nodes/`, `${this.opts.prefix}/alive/`, ...prefixes].map((key) => ({ get: { key, prefix: true } })),
      ],
    );
    const [records = [], alive = [], ...reads] = r.reads;
    return { nodes: this.observe(records, alive), reads };
  }

  /** This node's own record as last written. */
  get self(): NodeRecord {
    return { ...this.record };
  }

  /** Every node with its observed state. */
  async nodes(): Promise<NodeRecord[]> {
    const [records, alive] = await Promise.all([this.opts.client.getPrefix(`${this.opts.prefix}/nodes/`), this.opts.client.getPrefix(`${this.opts.prefix}/alive/`)]);
    return this.observe(records.kvs, alive.kvs);
  }

  /** Node records with their observed state, given the `nodes/` and `alive/` keys. */
  private observe(records: readonly KeyValue[], alive: readonly KeyValue[]): NodeRecord[] {
    const living = new Set(alive.map((kv) => kv.key.slice(`${this.opts.prefix}/alive/`.length)));
    const now = this.now();
    const out: NodeRecord[] = [];
    for (const kv of records) {
      const parsed = nodeRecordSchema.safeParse(JSON.parse(kv.value));
      if (!parsed.success) continue;
      out.push({ ...parsed.data, state: observedState(parsed.data, living.has(parsed.data.id), now, this.opts.heartbeatMs) });
    }
    return out;
  }

  /** Removes a node's record; refuses a live node unless `force`. Returns false for an unknown id. */
  async remove(id: string, force: boolean): Promise<'removed' | 'alive' | 'unknown'> {
    const alive = this.key('alive', id);
    const nodes = this.key('nodes', id);
    if (!force) {
      const r = await this.opts.client.txn([{ key: alive, target: 'CREATE', result: 'EQUAL', revision: 0 }], [{ get: { key: nodes } }, { delete: { key: nodes } }], [{ get: { key: nodes } }]);
      if (!r.succeeded) return 'alive';
      return r.reads[0]!.length > 0 ? 'removed' : 'unknown';
    }
    const r = await this.opts.client.txn([], [{ get: { key: nodes } }, { delete: { key: nodes } }, { delete: { key: alive } }]);
    return r.reads[0]!.length > 0 ? 'removed' : 'unknown';
  }

  /** Marks this node `leaving`, then deletes its record (the lease holding `alive` is revoked by the caller). */
  async leave(): Promise<void> {
    await this.heartbeat('leaving');
  }

  /** Forgets this node's record entirely (after a graceful stop). */
  async deregister(): Promise<void> {
    await this.opts.client.txn([], [{ delete: { key: this.key('nodes', this.record.id) } }, { delete: { key: this.key('alive', this.record.id) } }]);
  }
}

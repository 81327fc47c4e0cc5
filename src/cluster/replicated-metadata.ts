/**
 * Metadata tables replicated through etcd (tokens, databases, retention policies, continuous
 * queries, MQTT subscriptions): etcd holds one key per row under `<prefix>/meta/<table>/<key>`.
 * Local changes are captured by the catalog's triggers and sent in order; every node applies what
 * the watch brings, and a row with a local change still unsent keeps it (the change wins when it
 * arrives). The first node of a new cluster seeds etcd with its rows; every later node takes etcd's.
 */
import type { ReplicatedRow, ReplicationStore } from '../catalog/index.ts';
import type { EtcdClient, Op } from './etcd/etcd-client.ts';
import { watch, type Watch } from './etcd/watch.ts';
import { keepTrying } from './keep-trying.ts';

interface Log {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

const MAX_OPS = 100;

/** See the file comment. */
export class ReplicatedMetadata {
  private w: Watch | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private draining: Promise<void> | null = null;
  private again = false;
  private closed = false;

  constructor(
    private readonly client: EtcdClient,
    private readonly prefix: string,
    private readonly store: ReplicationStore,
    private readonly log: Log,
    /** Called after rows of `table` changed from another node (caches to drop). */
    private readonly onApplied: (table: string) => void,
  ) {}

  private get root(): string {
    return `${this.prefix}/meta/`;
  }

  private keyOf(table: string, key: string): string {
    return `${this.root}${table}/${encodeURIComponent(key)}`;
  }

  private parse(etcdKey: string): { table: string; key: string } {
    const rest = etcdKey.slice(this.root.length);
    const slash = rest.indexOf('/');
    return { table: rest.slice(0, slash), key: decodeURIComponent(rest.slice(slash + 1)) };
  }

  /** Seeds or loads the tables, then follows changes and sends local ones. */
  async start(nodeId: string): Promise<void> {
    const marker = `${this.prefix}/meta-seeded`;
    const claim = await this.client.txn([{ key: marker, target: 'CREATE', result: 'EQUAL', revision: 0 }], [{ put: { key: marker, value: JSON.stringify({ by: nodeId, at: new Date().toISOString() }) } }]);
    if (claim.succeeded) {
      const ops: Op[] = this.store.tables.flatMap((t) => this.store.rows(t.table).map((row): Op => ({ put: { key: this.keyOf(t.table, String(row[t.key])), value: JSON.stringify(row) } })));
      for (let i = 0; i < ops.length; i += MAX_OPS) await this.client.txn([], ops.slice(i, i + MAX_OPS));
      this.log.info('seeded the cluster metadata from this node', { rows: ops.length });
    }
    await this.load(true);
    this.timer = setInterval(() => void this.drain().catch(() => undefined), 200);
  }

  /**
   * Replaces this node's replicated rows with etcd's, then follows changes. A reload (the watch's
   * history was compacted away) first sends what this node changed meanwhile.
   */
  private async load(initial: boolean): Promise<void> {
    if (!initial) await this.drain().catch(() => undefined);
    const byTable = new Map<string, ReplicatedRow[]>(this.store.tables.map((t) => [t.table, []]));
    const { kvs, revision } = await this.client.getPrefixPaged(this.root);
    for (const kv of kvs) byTable.get(this.parse(kv.key).table)?.push(JSON.parse(kv.value) as ReplicatedRow);
    for (const [table, rows] of byTable) {
      this.store.replaceAll(table, rows);
      this.onApplied(table);
    }
    if (initial) {
      // What was captured before the first load is now etcd's state, not a change to send.
      const captured = this.store.outbox(1_000_000);
      if (captured.length) this.store.sent(captured[captured.length - 1]!.seq);
    }
    this.w?.close();
    if (this.closed) return;
    this.w = watch(this.client, this.root, { prefix: true, fromRevision: revision + 1 }, {
      onEvents: (events) => {
        const touched = new Set<string>();
        for (const e of events) {
          const { table, key } = this.parse(e.kv.key);
          if (!this.store.tables.some((t) => t.table === table) || this.store.pending(table, key)) continue;
          this.store.apply(table, key, e.type === 'DELETE' ? null : (JSON.parse(e.kv.value) as ReplicatedRow));
          touched.add(table);
        }
        for (const t of touched) this.onApplied(t);
      },
      onCompacted: (compacted) => {
        this.log.warn('the metadata watch fell behind etcd compaction; loading the metadata again', { compacted });
        void keepTrying('load the cluster metadata', () => this.load(false), () => this.closed, (m, f) => this.log.warn(m, f));
      },
      onError: (err) => this.log.warn('metadata watch interrupted; resuming', { error: err.message }),
    });
  }

  /** Sends every captured local change to etcd; resolves once they are there (throws if etcd refuses). */
  drain(): Promise<void> {
    if (this.draining) {
      this.again = true;
      return this.draining;
    }
    this.draining = this.send().finally(() => {
      this.draining = null;
      if (this.again) {
        this.again = false;
        void this.drain().catch(() => undefined);
      }
    });
    return this.draining;
  }

  private async send(): Promise<void> {
    for (;;) {
      const entries = this.store.outbox(MAX_OPS);
      if (entries.length === 0) return;
      const seen = new Set<string>();
      const ops: Op[] = [];
      for (const e of entries) {
        const id = `${e.table}/${e.key}`;
        if (seen.has(id)) continue;
        seen.add(id);
        const row = this.store.row(e.table, e.key);
        ops.push(row ? { put: { key: this.keyOf(e.table, e.key), value: JSON.stringify(row) } } : { delete: { key: this.keyOf(e.table, e.key) } });
      }
      await this.client.txn([], ops);
      this.store.sent(entries[entries.length - 1]!.seq);
    }
  }

  /** Stops following and sending (a last send first). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.drain().catch(() => undefined);
    this.w?.close();
  }
}

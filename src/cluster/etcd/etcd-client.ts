/**
 * A small etcd v3 client over the JSON gateway (plain HTTP + fetch), so it runs inside the single
 * executable: the `etcd3` package loads .proto files from disk at run time, which `bun build
 * --compile` cannot follow. Requests go to one endpoint at a time and move to the next one when an
 * endpoint cannot be reached, so losing a member (even the leader) costs one retry, not an outage.
 */
import { z } from 'zod';
import {
  b64,
  errorSchema,
  keepAliveSchema,
  leaseGrantSchema,
  memberListSchema,
  prefixEnd,
  rangeSchema,
  statusSchema,
  txnSchema,
  type KeyValue,
} from './wire.ts';

/** A failure talking to etcd; `unreachable` when no endpoint answered at all. */
export class EtcdError extends Error {
  constructor(
    message: string,
    readonly unreachable: boolean,
  ) {
    super(message);
  }
}

/** One comparison of a transaction. */
export type Compare =
  | { key: string; target: 'CREATE' | 'MOD' | 'VERSION'; result: 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL'; revision: number }
  | { key: string; target: 'VALUE'; result: 'EQUAL' | 'NOT_EQUAL'; value: string }
  | { key: string; target: 'LEASE'; result: 'EQUAL' | 'NOT_EQUAL'; lease: string };

/** One operation of a transaction branch. */
export type Op = { put: { key: string; value: string; lease?: string } } | { delete: { key: string; prefix?: boolean } } | { get: { key: string; prefix?: boolean } };

/** The outcome of a transaction: which branch ran, the revision after it, and the reads it made. */
export interface TxnResult {
  succeeded: boolean;
  revision: number;
  reads: KeyValue[][];
}

export interface EtcdClientOptions {
  endpoints: string[];
  /** Per-request limit; etcd itself gives up on a proposal after about 5 s without quorum. */
  requestTimeoutMs?: number;
}

function compareJson(c: Compare): Record<string, unknown> {
  const base = { key: b64(c.key), target: c.target, result: c.result };
  switch (c.target) {
    case 'CREATE':
      return { ...base, create_revision: String(c.revision) };
    case 'MOD':
      return { ...base, mod_revision: String(c.revision) };
    case 'VERSION':
      return { ...base, version: String(c.revision) };
    case 'VALUE':
      return { ...base, value: b64(c.value) };
    case 'LEASE':
      return { ...base, lease: c.lease };
  }
}

function opJson(op: Op): Record<string, unknown> {
  if ('put' in op) return { request_put: { key: b64(op.put.key), value: b64(op.put.value), ...(op.put.lease ? { lease: op.put.lease } : {}) } };
  if ('delete' in op) return { request_delete_range: { key: b64(op.delete.key), ...(op.delete.prefix ? { range_end: prefixEnd(op.delete.key) } : {}) } };
  return { request_range: { key: b64(op.get.key), ...(op.get.prefix ? { range_end: prefixEnd(op.get.key) } : {}) } };
}

/** The etcd v3 API calls svc needs: KV, transactions, leases, cluster status. Watches live in watch.ts. */
export class EtcdClient {
  readonly endpoints: string[];
  private current = 0;
  private readonly timeoutMs: number;

  constructor(opts: EtcdClientOptions) {
    if (opts.endpoints.length === 0) throw new Error('cannot create an etcd client: no endpoints');
    this.endpoints = opts.endpoints.map((e) => e.replace(/\/+$/, ''));
    this.timeoutMs = opts.requestTimeoutMs ?? 8000;
  }

  /** The endpoint requests go to now (it moves on when one cannot be reached). */
  get endpoint(): string {
    return this.endpoints[this.current]!;
  }

  /** POSTs `body` to a gateway path on the first endpoint that answers; gRPC errors become EtcdError. */
  async call<S extends z.ZodType>(path: string, body: unknown, schema: S, opts: { endpoint?: string; signal?: AbortSignal } = {}): Promise<z.output<S>> {
    const tried: string[] = [];
    const order = opts.endpoint ? [opts.endpoint] : this.endpoints.map((_, i) => this.endpoints[(this.current + i) % this.endpoints.length]!);
    for (const endpoint of order) {
      let res: Response;
      try {
        const signal = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(this.timeoutMs)]) : AbortSignal.timeout(this.timeoutMs);
        res = await fetch(`${endpoint}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, signal });
      } catch (err) {
        if (opts.signal?.aborted) throw err;
        tried.push(`${endpoint} (${(err as Error).name === 'TimeoutError' ? 'timed out' : (err as Error).message})`);
        // The next request starts at the endpoint after the one that failed.
        if (!opts.endpoint) this.current = (this.endpoints.indexOf(endpoint) + 1) % this.endpoints.length;
        continue;
      }
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new EtcdError(`etcd ${endpoint}${path} answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`, false);
      }
      if (!res.ok) {
        const e = errorSchema.safeParse(json);
        throw new EtcdError(`etcd ${path} failed: ${(e.success && (e.data.message ?? e.data.error)) || res.status}`, false);
      }
      return schema.parse(json);
    }
    throw new EtcdError(`cannot reach etcd: ${tried.join(', ')}`, true);
  }

  /** The value of one key, or null. */
  async get(key: string): Promise<KeyValue | null> {
    const r = await this.call('/v3/kv/range', { key: b64(key) }, rangeSchema);
    return r.kvs[0] ?? null;
  }

  /** Every key under `prefix`, in key order, and the revision the read saw. */
  async getPrefix(prefix: string, opts: { limit?: number; revision?: number; startAfter?: string } = {}): Promise<{ kvs: KeyValue[]; revision: number; more: boolean }> {
    const from = opts.startAfter !== undefined ? b64(`${opts.startAfter}\0`) : b64(prefix);
    const r = await this.call(
      '/v3/kv/range',
      { key: from, range_end: prefixEnd(prefix), ...(opts.limit ? { limit: String(opts.limit) } : {}), ...(opts.revision ? { revision: String(opts.revision) } : {}) },
      rangeSchema,
    );
    return { kvs: r.kvs, revision: r.header.revision, more: r.more ?? false };
  }

  /** Every key under `prefix` at one revision, read in pages of `pageSize` (no single answer grows past etcd's limits). */
  async getPrefixPaged(prefix: string, pageSize = 500): Promise<{ kvs: KeyValue[]; revision: number }> {
    const kvs: KeyValue[] = [];
    let revision = 0;
    let after: string | undefined;
    for (;;) {
      const page = await this.getPrefix(prefix, { limit: pageSize, ...(revision ? { revision } : {}), ...(after !== undefined ? { startAfter: after } : {}) });
      revision ||= page.revision;
      kvs.push(...page.kvs);
      if (!page.more || page.kvs.length === 0) return { kvs, revision };
      after = page.kvs[page.kvs.length - 1]!.key;
    }
  }

  /** Writes one key (attached to `lease` when given); returns the new revision. */
  async put(key: string, value: string, lease?: string): Promise<number> {
    const r = await this.call('/v3/kv/put', { key: b64(key), value: b64(value), ...(lease ? { lease } : {}) }, z.object({ header: rangeSchema.shape.header }));
    return r.header.revision;
  }

  /** Deletes one key, or every key under it with `prefix`; returns how many went. */
  async delete(key: string, opts: { prefix?: boolean } = {}): Promise<number> {
    const r = await this.call('/v3/kv/deleterange', { key: b64(key), ...(opts.prefix ? { range_end: prefixEnd(key) } : {}) }, z.object({ deleted: z.union([z.string(), z.number()]).optional() }));
    return Number(r.deleted ?? 0);
  }

  /** Discards the history before `revision` (watches from older revisions are then told so). */
  async compact(revision: number): Promise<void> {
    await this.call('/v3/kv/compaction', { revision: String(revision), physical: true }, z.object({}).loose());
  }

  /** Runs `success` when every comparison holds, else `failure`, atomically. */
  async txn(compare: Compare[], success: Op[], failure: Op[] = []): Promise<TxnResult> {
    const r = await this.call('/v3/kv/txn', { compare: compare.map(compareJson), success: success.map(opJson), failure: failure.map(opJson) }, txnSchema);
    return { succeeded: r.succeeded, revision: r.header.revision, reads: r.responses.filter((x) => x.response_range).map((x) => x.response_range!.kvs) };
  }

  /** Grants a lease of `ttlSec` seconds; returns its id. */
  async leaseGrant(ttlSec: number): Promise<string> {
    const r = await this.call('/v3/lease/grant', { TTL: String(ttlSec) }, leaseGrantSchema);
    if (r.error) throw new EtcdError(`cannot grant an etcd lease: ${r.error}`, false);
    return r.ID;
  }

  /** Renews a lease once; returns the TTL left, 0 or less when the lease is gone. */
  async leaseKeepAlive(id: string): Promise<number> {
    const r = await this.call('/v3/lease/keepalive', { ID: id }, keepAliveSchema);
    if (r.error) throw new EtcdError(`cannot keep the etcd lease alive: ${r.error.message ?? 'unknown error'}`, false);
    return r.result?.TTL ?? 0;
  }

  /** Revokes a lease, deleting every key attached to it. */
  async leaseRevoke(id: string): Promise<void> {
    await this.call('/v3/lease/revoke', { ID: id }, z.object({}).passthrough());
  }

  /** The members of the etcd cluster. */
  async members(): Promise<{ id: string; name: string; clientURLs: string[] }[]> {
    const r = await this.call('/v3/cluster/member/list', {}, memberListSchema);
    return r.members.map((m) => ({ id: m.ID, name: m.name, clientURLs: m.clientURLs }));
  }

  /** One endpoint's own view: its member id, the leader it follows, its version. */
  async status(endpoint: string): Promise<{ memberId: string; leader: string; version: string; revision: number }> {
    const r = await this.call('/v3/maintenance/status', {}, statusSchema, { endpoint });
    return { memberId: r.header.member_id ?? '', leader: r.leader, version: r.version, revision: r.header.revision };
  }
}

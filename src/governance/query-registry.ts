/**
 * Running queries and the last finished ones. The port is what query management needs; the local
 * implementation keeps both in memory (a cluster would share the active set through etcd and
 * forward a cancel to the node that runs the query).
 */
import { randomId } from '../lib/crypto.ts';
import type { QueryOrigin, StopReason } from '../query/index.ts';

/** Statuses of a query record. */
export const QUERY_STATUSES = ['running', 'completed', 'failed', 'cancelled', 'timed_out'] as const;
export type QueryStatus = (typeof QUERY_STATUSES)[number];

/** A query as the API shows it. */
export interface QueryRecord {
  id: string;
  sql: string;
  database: string | null;
  format: string;
  source: string;
  token_id: string | null;
  token_name: string | null;
  client_ip: string | null;
  started_at: string;
  elapsed_ms: number;
  status: QueryStatus;
  finished_at?: string;
  duration_ms?: number;
  row_count?: number;
  error?: string | null;
}

/** Filters of the history. */
export interface HistoryFilter {
  limit: number;
  status?: QueryStatus;
  token_id?: string;
  database?: string;
  /** Only queries started at or after this time (ms). */
  since?: number;
}

/** A registered running query: its id and how it learns it must stop. */
export interface RunningQuery {
  readonly id: string;
  stopReason(): StopReason | null;
  /** Called once on cancel (null clears it). */
  onStop(listener: (() => void) | null): void;
}

/** The outcome `cancel` reports. */
export type CancelResult = 'cancelled' | 'finished' | 'unknown';

/** The registry port. */
export interface QueryRegistry {
  start(q: { sql: string; database: string | null; origin: QueryOrigin }): RunningQuery;
  finish(id: string, outcome: { rowCount: number; error: string | null; stop: StopReason | null }): void;
  active(): QueryRecord[];
  history(filter: HistoryFilter): QueryRecord[];
  get(id: string): QueryRecord | null;
  cancel(id: string, by: string): CancelResult;
}

interface Live {
  record: QueryRecord;
  startedMs: number;
  listener: (() => void) | null;
  reason: StopReason | null;
}

/** How many finished queries the history keeps. */
export const HISTORY_SIZE = 1000;

/** The registry of one node. */
export class LocalQueryRegistry implements QueryRegistry {
  private readonly live = new Map<string, Live>();
  /** Finished queries, oldest first, at most HISTORY_SIZE (a ring would save little at this size). */
  private readonly done: QueryRecord[] = [];
  private readonly doneById = new Map<string, QueryRecord>();
  /** Ids are this node's random prefix and a sequence: unique without a random draw per query. */
  private readonly idPrefix = `q_${randomId(4)}`;
  private seq = 0;

  constructor(private readonly now: () => number = Date.now) {}

  start(q: { sql: string; database: string | null; origin: QueryOrigin }): RunningQuery {
    const startedMs = this.now();
    const o = q.origin;
    const record: QueryRecord = {
      id: `${this.idPrefix}${(++this.seq).toString(36)}`,
      sql: q.sql,
      database: q.database,
      format: o.format,
      source: o.source,
      token_id: o.tokenId,
      token_name: o.tokenName,
      client_ip: o.clientIp,
      started_at: new Date(startedMs).toISOString(),
      elapsed_ms: 0,
      status: 'running',
    };
    const live: Live = { record, startedMs, listener: null, reason: null };
    this.live.set(record.id, live);
    return {
      id: record.id,
      stopReason: () => live.reason,
      onStop: (listener) => void (live.listener = listener),
    };
  }

  finish(id: string, outcome: { rowCount: number; error: string | null; stop: StopReason | null }): void {
    const live = this.live.get(id);
    if (!live) return;
    this.live.delete(id);
    const end = this.now();
    const stop = live.reason ?? outcome.stop;
    const status: QueryStatus = stop ? stop.status : outcome.error === null ? 'completed' : 'failed';
    const record: QueryRecord = {
      ...live.record,
      elapsed_ms: end - live.startedMs,
      status,
      finished_at: new Date(end).toISOString(),
      duration_ms: end - live.startedMs,
      row_count: outcome.rowCount,
      error: stop ? stop.message : outcome.error,
    };
    this.done.push(record);
    this.doneById.set(record.id, record);
    if (this.done.length > HISTORY_SIZE) this.doneById.delete(this.done.shift()!.id);
  }

  active(): QueryRecord[] {
    const now = this.now();
    return [...this.live.values()].map((l) => ({ ...l.record, elapsed_ms: now - l.startedMs }));
  }

  history(f: HistoryFilter): QueryRecord[] {
    const out: QueryRecord[] = [];
    for (let i = this.done.length - 1; i >= 0 && out.length < f.limit; i--) {
      const r = this.done[i]!;
      if (f.status && r.status !== f.status) continue;
      if (f.token_id && r.token_id !== f.token_id) continue;
      if (f.database && r.database !== f.database) continue;
      if (f.since !== undefined && Date.parse(r.started_at) < f.since) continue;
      out.push(r);
    }
    return out;
  }

  get(id: string): QueryRecord | null {
    const live = this.live.get(id);
    if (live) return { ...live.record, elapsed_ms: this.now() - live.startedMs };
    return this.doneById.get(id) ?? null;
  }

  cancel(id: string, by: string): CancelResult {
    const live = this.live.get(id);
    if (!live) return this.doneById.has(id) ? 'finished' : 'unknown';
    if (live.reason) return 'cancelled';
    live.reason = { status: 'cancelled', message: `query cancelled by ${by} (DELETE /api/v1/queries/${id})` };
    live.listener?.();
    return 'cancelled';
  }
}

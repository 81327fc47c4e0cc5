/**
 * The audit log: a fixed queue of 1000 events (the spec's), written in batches by a timer. A full
 * queue drops the event (warning, svc_audit_events_dropped_total); a failed batch loses its events
 * (svc_audit_write_errors_total), as the spec says. Retention trims old events every hour.
 */
import { messageOf } from '../lib/errors.ts';
import { REDACTED, looksSecret, scrubPath } from '../lib/scrub.ts';
import type { Logger, SvcMetrics } from '../observability/index.ts';
import { actionOf } from './actions.ts';
import type { AuditEvent, AuditRequest } from './audit-event.ts';
import type { AuditCounts, AuditFilter, AuditStore } from './audit-store.ts';

/** The spec's queue size; not configurable. */
export const AUDIT_QUEUE_SIZE = 1000;
/** How long an event may wait in the queue before its batch is written. */
const FLUSH_EVERY_MS = 100;
const HOUR_MS = 3_600_000;

/** GET /api/v1/audit/stats. */
export interface AuditStats extends AuditCounts {
  dropped: number;
  write_errors: number;
}

/** Records audit events and answers the audit routes. */
export class AuditLog {
  private queue: AuditEvent[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private trimTimer: ReturnType<typeof setInterval> | null = null;
  private lastDropWarning = 0;

  constructor(
    private readonly store: AuditStore,
    private readonly opts: { retentionDays: number; includeReads: boolean },
    private readonly metrics: SvcMetrics,
    private readonly logger: Logger,
  ) {}

  /** Whether a request with this method, path and status is recorded. */
  wants(method: string, status: number, path: string): boolean {
    if (status === 401 || status === 403 || this.opts.includeReads) return true;
    if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return false;
    // POST is how queries are sent: reading, not changing anything.
    return !isQueryRead(path);
  }

  /** Queues one event (built from the request, scrubbed); drops it when the queue is full. */
  record(r: AuditRequest): void {
    if (this.queue.length >= AUDIT_QUEUE_SIZE) {
      this.metrics.auditDropped.inc();
      const now = Date.now();
      // One warning a second at most: a flood of drops must not become a flood of log lines.
      if (now - this.lastDropWarning >= 1000) {
        this.lastDropWarning = now;
        this.logger.warn('audit queue full: event dropped', { queue_size: AUDIT_QUEUE_SIZE, dropped_total: this.metrics.auditDropped.value() });
      }
      return;
    }
    const path = scrubPath(r.path);
    const { action, target } = r.action ? { action: r.action, target: null } : actionOf(r.method, path);
    const detail: Record<string, string> = { ...r.detail, service: r.service };
    if (target !== null && target !== REDACTED) detail.target = target;
    this.queue.push({
      time: new Date(r.timeMs).toISOString(),
      token_id: r.tokenId,
      token_name: r.tokenName,
      client_ip: r.clientIp,
      method: r.method,
      path,
      status: r.status,
      duration_ms: Math.round(r.durationMs * 1000) / 1000,
      database: r.database !== null && !looksSecret(r.database) ? r.database : null,
      action,
      detail,
    });
    this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_EVERY_MS);
  }

  /** Writes every queued event in one batch now. */
  flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    try {
      this.store.insert(batch);
      this.metrics.auditEvents.inc(batch.length);
    } catch (err) {
      this.metrics.auditWriteErrors.inc();
      this.logger.error('cannot write audit events: the batch is lost', { events: batch.length, error: messageOf(err) });
    }
  }

  list(filter: AuditFilter): AuditEvent[] {
    this.flush();
    return this.store.list(filter);
  }

  stats(): AuditStats {
    this.flush();
    return { ...this.store.counts(), dropped: this.metrics.auditDropped.value(), write_errors: this.metrics.auditWriteErrors.value() };
  }

  /** Trims now and every hour. */
  start(): void {
    this.trim();
    this.trimTimer = setInterval(() => this.trim(), HOUR_MS);
    this.trimTimer.unref?.();
  }

  /** Writes what is queued and stops the timers. */
  stop(): void {
    if (this.trimTimer) clearInterval(this.trimTimer);
    this.trimTimer = null;
    this.flush();
  }

  private trim(): void {
    try {
      const n = this.store.trim(Date.now() - this.opts.retentionDays * 86_400_000);
      if (n > 0) this.logger.info('audit events past retention removed', { removed: n, retention_days: this.opts.retentionDays });
    } catch (err) {
      this.logger.error('cannot trim audit events', { error: messageOf(err) });
    }
  }
}

/** The query routes are POSTs that read. */
function isQueryRead(path: string): boolean {
  return path === '/api/v1/query' || path.startsWith('/api/v1/query/');
}

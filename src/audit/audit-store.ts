/**
 * Audit events in the catalog's SQLite file (table `audit_events`). SQLite, not a reserved
 * time-series database: events are few and small, are filtered by token, action, status and path
 * (indexes, not Parquet scans), become durable at commit (a kill -9 after the batch commit loses
 * none; the time-series path would hold them in a buffer until the next flush unless the WAL is
 * on), stay out of the user-visible query path altogether (no database a non-admin could query),
 * and go with the metadata in a backup. Retention trims them by time.
 */
import type { CatalogDb } from '../catalog/index.ts';
import type { AuditEvent } from './audit-event.ts';

/** Filters of GET /api/v1/audit/logs. */
export interface AuditFilter {
  since?: number;
  until?: number;
  token_id?: string;
  action?: string;
  method?: string;
  status?: number;
  path_prefix?: string;
  limit: number;
}

/** GET /api/v1/audit/stats, without the process counters. */
export interface AuditCounts {
  total: number;
  by_action: Record<string, number>;
  by_status: Record<string, number>;
  by_token: Record<string, number>;
  /** Time of the oldest stored event, or null when there is none. */
  since: string | null;
}

/** Storage port of the audit log (a cluster may keep events elsewhere). */
export interface AuditStore {
  /** Writes a batch in one transaction: all or none. */
  insert(events: AuditEvent[]): void;
  list(filter: AuditFilter): AuditEvent[];
  counts(): AuditCounts;
  /** Deletes events older than `beforeMs`; returns how many. */
  trim(beforeMs: number): number;
}

/** A stored event: the time as epoch ms, the detail as JSON text. */
type Row = Omit<AuditEvent, 'time' | 'detail'> & { time_ms: number; detail: string | null };

/** Audit events in SQLite. */
export class SqliteAuditStore implements AuditStore {
  constructor(private readonly db: CatalogDb) {}

  insert(events: AuditEvent[]): void {
    const put = this.db.prepare(
      'INSERT INTO audit_events (time_ms, token_id, token_name, client_ip, method, path, status, duration_ms, database, action, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      for (const e of events)
        put.run(Date.parse(e.time), e.token_id, e.token_name, e.client_ip, e.method, e.path, e.status, e.duration_ms, e.database, e.action, e.detail ? JSON.stringify(e.detail) : null);
    })();
  }

  list(f: AuditFilter): AuditEvent[] {
    const where: string[] = [];
    const args: (string | number)[] = [];
    const add = (sql: string, v: string | number | undefined) => {
      if (v === undefined) return;
      where.push(sql);
      args.push(v);
    };
    add('time_ms >= ?', f.since);
    add('time_ms <= ?', f.until);
    add('token_id = ?', f.token_id);
    add('action = ?', f.action);
    add('method = ?', f.method);
    add('status = ?', f.status);
    // substr, not LIKE: a prefix holding % or _ matches literally.
    if (f.path_prefix !== undefined) (where.push('substr(path, 1, ?) = ?'), args.push(f.path_prefix.length, f.path_prefix));
    const sql = `SELECT time_ms, token_id, token_name, client_ip, method, path, status, duration_ms, database, action, detail FROM audit_events${
      where.length ? ` WHERE ${where.join(' AND ')}` : ''
    } ORDER BY time_ms DESC, id DESC LIMIT ?`;
    return this.db
      .query<Row, (string | number)[]>(sql)
      .all(...args, f.limit)
      .map((r) => ({
        time: new Date(r.time_ms).toISOString(),
        token_id: r.token_id,
        token_name: r.token_name,
        client_ip: r.client_ip,
        method: r.method,
        path: r.path,
        status: r.status,
        duration_ms: r.duration_ms,
        database: r.database,
        action: r.action,
        detail: r.detail ? (JSON.parse(r.detail) as Record<string, string>) : null,
      }));
  }

  counts(): AuditCounts {
    const group = (col: string) =>
      Object.fromEntries(
        this.db
          .query<{ k: string | number | null; n: number }, []>(`SELECT ${col} AS k, count(*) AS n FROM audit_events GROUP BY ${col} ORDER BY n DESC`)
          .all()
          .map((r) => [String(r.k ?? 'anonymous'), r.n]),
      );
    const head = this.db.query<{ total: number; oldest: number | null }, []>('SELECT count(*) AS total, min(time_ms) AS oldest FROM audit_events').get()!;
    return {
      total: head.total,
      by_action: group('action'),
      by_status: group('status'),
      by_token: group('token_id'),
      since: head.oldest === null ? null : new Date(head.oldest).toISOString(),
    };
  }

  trim(beforeMs: number): number {
    return this.db.prepare('DELETE FROM audit_events WHERE time_ms < ?').run(beforeMs).changes;
  }
}

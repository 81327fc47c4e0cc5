/** The audit event: who did what, when, from where, with what outcome; never a secret or a body. */
export interface AuditEvent {
  /** RFC 3339 UTC. */
  time: string;
  token_id: string | null;
  token_name: string | null;
  client_ip: string | null;
  method: string;
  /** The path only: the query string (which may carry `p=<token>`) is never kept. */
  path: string;
  status: number;
  duration_ms: number;
  database: string | null;
  /** The operation: `token.create`, `database.delete`, `query.cancel`, `retention.apply`, ... */
  action: string;
  /** What the path names (an id), the service; never a body or a credential. */
  detail: Record<string, string> | null;
}

/** What a request hands the audit log; the log derives the action, the detail and scrubs the path. */
export interface AuditRequest {
  /** Which listener: `timeseries`, `memory` or `pgwire` (the Postgres wire protocol). */
  service: 'timeseries' | 'memory' | 'pgwire';
  timeMs: number;
  tokenId: string | null;
  tokenName: string | null;
  clientIp: string | null;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  database: string | null;
  /** The action when the path cannot say it (pgwire has no paths); derived from method and path otherwise. */
  action?: string;
  /** More of what the event names (pgwire: the user name the client gave); never a secret. */
  detail?: Record<string, string>;
}

/**
 * The query engine's port for query management and governance: every query asks the gate for
 * admission before it runs and reports its end. governance/ implements it (registry, policies,
 * counters); the engine knows only this shape, so it runs unchanged without one.
 */

/** Where a query came from: which path ran it and for whom. */
export interface QueryOrigin {
  /** The path: `query`, `estimate`, `show`, `measurement`, `continuous_query`, `memory`, `internal`, ... */
  source: string;
  /** The result format (`json`, `arrow`, `msgpack`, `none`). */
  format: string;
  tokenId: string | null;
  tokenName: string | null;
  /** Admins are not bound by the default policy (only by one of their own). */
  isAdmin: boolean;
  clientIp: string | null;
}

/** Why the gate stopped a query. */
export interface StopReason {
  status: 'cancelled' | 'timed_out';
  message: string;
}

/** A query the gate let in: limits to apply while it runs and the way to report its end. */
export interface QueryAdmission {
  /**
   * Sets the function called when the query must stop (a cancel; `stopReason()` says why), or
   * clears it with null. A plain callback, not an AbortSignal: a controller per query costs more
   * than the rest of the gate together.
   */
  onStop(listener: (() => void) | null): void;
  /** The result is cut at this many rows (max_rows_per_query), or null. */
  readonly maxRows: number | null;
  /** Longest the query may run (max_scan_duration_seconds) in ms, or null. */
  readonly scanLimitMs: number | null;
  stopReason(): StopReason | null;
  /** Reports the end: rows returned, whether they were capped, the error message when it failed. */
  finish(outcome: { rowCount: number; rowsCapped: boolean; error: string | null; stop: StopReason | null }): void;
}

/** Admits queries; throws an AppError (429) when a limit refuses one. */
export interface QueryGate {
  admit(query: { sql: string; database: string | null; origin: QueryOrigin }): QueryAdmission;
}

/** The origin of work the service starts itself (DESCRIBE's column probe, deletes, ...). */
export const INTERNAL_ORIGIN: QueryOrigin = { source: 'internal', format: 'none', tokenId: null, tokenName: null, isAdmin: true, clientIp: null };

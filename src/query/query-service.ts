/**
 * The query engine's public face: runs SQL (or a SHOW statement) on a pooled, sandboxed DuckDB
 * connection under `query.timeout` and the client's abort signal, counts and logs the outcome, and
 * hands the result to the caller's encoder. Also answers estimates and measurement listings.
 */
import type { ConnectionPool, DuckDBConnection } from '../duckdb/index.ts';
import { AppError, messageOf } from '../lib/errors.ts';
import type { Logger, SvcMetrics } from '../observability/index.ts';
import type { ResultColumn } from './encode/result.ts';
import { engineError } from './engine-errors.ts';
import { INTERNAL_ORIGIN, type QueryAdmission, type QueryGate, type QueryOrigin, type StopReason } from './query-gate.ts';
import { executeSelect, type ChunkEncoder, type ExecuteOptions, type QueryProfile, type ResultConsumer } from './execution.ts';
import { estimateQuery, type QueryEstimate } from './estimate.ts';
import { showSql } from './show-sql.ts';
import { readableMeasurements, type TableAccess } from '../lib/table-access.ts';
import { parseShow } from './sql/show.ts';
import { parseSql } from './sql/parse.ts';
import { parameterCount } from './sql/session.ts';
import type { TableSource } from './table-source.ts';

/** Settings of the engine (from [query]). */
export interface QueryServiceOptions {
  /** query.timeout in ms; 0 disables. */
  timeoutMs: number;
  /** query.slow_query_threshold_ms; 0 disables. */
  slowQueryMs: number;
}

/** One request to run. */
export interface QueryRequest {
  sql: string;
  /** x-svc-database: resolves bare measurement names. */
  database?: string;
  /** What the caller may read (auth/rbac's authorizer; UNRESTRICTED for admins and internal work). */
  access: TableAccess;
  /** Aborts (client disconnect) cancel the running statement. */
  signal?: AbortSignal;
  /** Refuse SHOW/DESCRIBE with this message (the Arrow route). */
  refuseShow?: string;
  /** false: read all files, no pruning (tests compare both). */
  prune?: boolean;
  /** Result columns DuckDB computes for the encoder (the JSON routes: encode/json-render.ts). */
  render?: ExecuteOptions['render'];
  /** Who runs it and through which path (query management, governance); internal work when absent. */
  origin?: QueryOrigin;
  /** `$n` values (Postgres wire Bind). */
  params?: ExecuteOptions['params'];
  /** The Postgres wire session the statement runs in. */
  session?: ExecuteOptions['session'];
  /** Columns only, nothing run (the Postgres wire Describe). */
  describeOnly?: boolean;
}

/** A finished query. */
export interface QueryOutcome<E> {
  encoder: E;
  columns: ResultColumn[];
  executionTimeMs: number;
  profile: QueryProfile;
}

const CLIENT_GONE: StopReason = { status: 'cancelled', message: 'query cancelled: the client disconnected' };

/** The error a stopped query answers: 504 past a time limit, 409 cancelled by an operator, 400 when the client left. */
function stoppedError(reason: StopReason, cause?: unknown): AppError {
  const kind = reason.status === 'timed_out' ? 'timeout' : reason === CLIENT_GONE ? 'invalid' : 'cancelled';
  return new AppError(kind, reason.message, cause === undefined ? undefined : { cause });
}

/** Runs queries; built once by main.ts. */
export class QueryService {
  constructor(
    private readonly pool: ConnectionPool,
    private readonly source: TableSource,
    private readonly opts: QueryServiceOptions,
    private readonly metrics: SvcMetrics | null = null,
    private readonly logger: Logger | null = null,
    /** Query management and governance (governance/); null runs every query ungated. */
    private readonly gate: QueryGate | null = null,
  ) {}

  /** Runs `req.sql` and feeds its whole result to the encoder built from the result columns. */
  async run<E extends ChunkEncoder>(req: QueryRequest, makeEncoder: (columns: ResultColumn[]) => E): Promise<QueryOutcome<E>> {
    const out = await this.execute(req, async (columns, next) => {
      const encoder = makeEncoder(columns);
      for (let chunk = await next(); chunk; chunk = await next()) await encoder.add(chunk);
      await encoder.drain?.();
      return encoder;
    });
    return { encoder: out.result, columns: out.columns, profile: out.profile, executionTimeMs: out.executionTimeMs };
  }

  /**
   * Runs `req.sql` under the timeout and the abort signal, counted and logged; `consume` reads the
   * result while the query holds its connection (see executeSelect).
   */
  async execute<R extends { rowCount: number }>(
    req: QueryRequest,
    consume: ResultConsumer<R>,
  ): Promise<{ result: R; columns: ResultColumn[]; profile: QueryProfile; executionTimeMs: number; rowsCapped: boolean }> {
    const started = performance.now();
    this.metrics?.queryRequests.inc();
    const show = parseShow(req.sql);
    const origin = req.origin && show ? { ...req.origin, source: 'show' } : req.origin;
    return this.governed(req, origin, async (conn, admission) => {
      if (show && req.refuseShow) throw new AppError('invalid', req.refuseShow);
      const out = show
        ? // The listing's own SQL reads no measurement.
          await executeSelect(conn, this.source, { sql: await showSql(show, req.database, this.source, req.access, (d) => this.columnsOf(conn, d, req.database, req.access)), access: req.access, maxRows: admission?.maxRows }, consume)
        : await executeSelect(conn, this.source, { ...req, maxRows: admission?.maxRows }, consume);
      const executionTimeMs = Math.round((performance.now() - started) * 1000) / 1000;
      this.noteSlow(req.sql, executionTimeMs, out.result.rowCount);
      return { value: { ...out, executionTimeMs }, rowCount: out.result.rowCount, rowsCapped: out.rowsCapped };
    });
  }

  /** Files, bytes and rows a query would scan (see estimate.ts). */
  async estimate(req: { sql: string; database?: string; access: TableAccess; origin?: QueryOrigin; signal?: AbortSignal }): Promise<QueryEstimate> {
    const origin = req.origin ? { ...req.origin, source: 'estimate', format: 'json' } : undefined;
    return this.governed(req, origin, async (conn) => {
      const value = await estimateQuery(conn, this.source, req.sql, req.database, req.access);
      return { value, rowCount: 0, rowsCapped: false };
    });
  }

  /**
   * Admits the query through the gate (which may refuse it with 429), runs `fn` on a connection
   * under the timeout, the client's signal and the gate's own stop signal, and reports the outcome.
   */
  private async governed<T>(
    req: { sql: string; database?: string; signal?: AbortSignal },
    origin: QueryOrigin | undefined,
    fn: (conn: DuckDBConnection, admission: QueryAdmission | null) => Promise<{ value: T; rowCount: number; rowsCapped: boolean }>,
  ): Promise<T> {
    let admission: QueryAdmission | null = null;
    const stop: { reason: StopReason | null } = { reason: null };
    try {
      admission = this.gate?.admit({ sql: req.sql, database: req.database ?? null, origin: origin ?? INTERNAL_ORIGIN }) ?? null;
      const out = await this.withConnection(req.signal, admission, stop, (conn) => fn(conn, admission));
      admission?.finish({ rowCount: out.rowCount, rowsCapped: out.rowsCapped, error: null, stop: null });
      return out.value;
    } catch (err) {
      this.metrics?.queryErrors.inc();
      admission?.finish({ rowCount: 0, rowsCapped: false, error: messageOf(err), stop: stop.reason });
      throw err;
    }
  }

  /** How many `$n` parameters `sql` takes, from DuckDB's parse (the Postgres wire Describe). SHOW takes none. */
  async parameterCount(sql: string): Promise<number> {
    if (parseShow(sql)) return 0;
    return this.withConnection(undefined, null, { reason: null }, async (conn) => parameterCount(await parseSql(conn, sql)));
  }

  /** Measurements with data that `access` may read, optionally of one database. */
  measurements(access: TableAccess, database?: string): { database: string; measurement: string }[] {
    return readableMeasurements(this.source.measurements(database), access);
  }

  /** Columns and DuckDB types of `SELECT * FROM <sql's table>` (for DESCRIBE). */
  private async columnsOf(conn: DuckDBConnection, sql: string, database: string | undefined, access: TableAccess): Promise<ResultColumn[]> {
    const { columns } = await executeSelect(conn, this.source, { sql, database, access }, async () => ({ rowCount: 0 }));
    return columns;
  }

  /**
   * Borrows a connection and interrupts its statement on timeout, client abort or the gate's stop
   * signal (a cancel, a scan limit); `stop.reason` is set to why it was stopped.
   */
  private async withConnection<T>(
    signal: AbortSignal | undefined,
    admission: QueryAdmission | null,
    stop: { reason: StopReason | null },
    fn: (conn: DuckDBConnection) => Promise<T>,
  ): Promise<T> {
    if (!signal && !admission) return this.withPooled(undefined, null, stop, fn, () => undefined);
    // A query still waiting for a connection answers a cancel or a client abort at once; when a
    // connection comes later, the check at its start hands it straight back.
    let leave: ((reason: StopReason) => void) | null = null;
    const left = new Promise<never>((_, reject) => {
      leave = (reason) => {
        stop.reason ??= reason;
        reject(stoppedError(stop.reason));
      };
    });
    const onQueuedAbort = () => leave!(CLIENT_GONE);
    signal?.addEventListener('abort', onQueuedAbort, { once: true });
    admission?.onStop(() => leave!(admission.stopReason() ?? { status: 'cancelled', message: 'query cancelled' }));
    const run = this.withPooled(signal, admission, stop, fn, () => signal?.removeEventListener('abort', onQueuedAbort));
    run.catch(() => undefined);
    left.catch(() => undefined);
    try {
      return await Promise.race([run, left]);
    } finally {
      signal?.removeEventListener('abort', onQueuedAbort);
    }
  }

  /** The part of withConnection that holds a connection. */
  private async withPooled<T>(
    signal: AbortSignal | undefined,
    admission: QueryAdmission | null,
    stop: { reason: StopReason | null },
    fn: (conn: DuckDBConnection) => Promise<T>,
    acquired: () => void,
  ): Promise<T> {
    return this.pool.use(async (conn) => {
      acquired();
      let repeat: ReturnType<typeof setInterval> | null = null;
      // Interrupt now and again every 50 ms: a signal that lands between two statements of the query
      // would otherwise be lost and the next statement would run on.
      const interrupt = (reason: StopReason) => {
        stop.reason ??= reason;
        conn.interrupt();
        repeat ??= setInterval(() => conn.interrupt(), 50);
      };
      const timeoutMs = this.opts.timeoutMs;
      const timer = timeoutMs > 0 ? setTimeout(() => interrupt({ status: 'timed_out', message: `query cancelled: it ran longer than query.timeout (${timeoutMs} ms)` }), timeoutMs) : null;
      const scanMs = admission?.scanLimitMs ?? null;
      const scanTimer = scanMs !== null ? setTimeout(() => interrupt({ status: 'timed_out', message: `query stopped: it ran longer than the governance limit max_scan_duration_seconds (${scanMs / 1000} s)` }), scanMs) : null;
      const onAbort = () => interrupt(CLIENT_GONE);
      const onStop = () => interrupt(admission?.stopReason() ?? { status: 'cancelled', message: 'query cancelled' });
      if (signal?.aborted) stop.reason = CLIENT_GONE;
      signal?.addEventListener('abort', onAbort, { once: true });
      admission?.onStop(onStop);
      try {
        if (admission?.stopReason()) onStop();
        if (stop.reason) throw stoppedError(stop.reason);
        return await fn(conn);
      } catch (err) {
        if (stop.reason?.status === 'timed_out') this.metrics?.queryTimeouts.inc();
        if (stop.reason) throw stoppedError(stop.reason, err);
        throw engineError(err, undefined, this.source.root);
      } finally {
        if (timer) clearTimeout(timer);
        if (scanTimer) clearTimeout(scanTimer);
        if (repeat) clearInterval(repeat);
        signal?.removeEventListener('abort', onAbort);
        admission?.onStop(null);
        // An interrupt may have hit the query's own ROLLBACK: leave the connection clean for the next user.
        if (stop.reason) await conn.run('ROLLBACK').catch(() => undefined);
      }
    });
  }

  private noteSlow(sql: string, ms: number, rows: number): void {
    const threshold = this.opts.slowQueryMs;
    if (threshold <= 0 || ms < threshold) return;
    this.metrics?.slowQueries.inc();
    this.logger?.warn('slow query', { duration_ms: ms, threshold_ms: threshold, rows, sql: sql.length > 2000 ? `${sql.slice(0, 2000)}...` : sql });
  }
}

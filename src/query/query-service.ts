/**
 * The query engine's public face: runs SQL (or a SHOW statement) on a pooled, sandboxed DuckDB
 * connection under `query.timeout` and the client's abort signal, counts and logs the outcome, and
 * hands the result to the caller's encoder. Also answers estimates and measurement listings.
 */
import type { ConnectionPool, DuckDBConnection } from '../duckdb/index.ts';
import { AppError } from '../lib/errors.ts';
import type { Logger, SvcMetrics } from '../observability/index.ts';
import type { ResultColumn } from './encode/result.ts';
import { engineError, isInterrupt } from './engine-errors.ts';
import { executeSelect, type ChunkEncoder, type ExecuteOptions, type QueryProfile, type ResultConsumer } from './execution.ts';
import { estimateQuery, type QueryEstimate } from './estimate.ts';
import { showSql } from './show-sql.ts';
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
  /** Aborts (client disconnect) cancel the running statement. */
  signal?: AbortSignal;
  /** Refuse SHOW/DESCRIBE with this message (the Arrow route). */
  refuseShow?: string;
  /** false: read all files, no pruning (tests compare both). */
  prune?: boolean;
  /** Result columns DuckDB computes for the encoder (the JSON routes: encode/json-render.ts). */
  render?: ExecuteOptions['render'];
  /** `$n` values (Postgres wire Bind). */
  params?: ExecuteOptions['params'];
  /** The Postgres wire session the statement runs in. */
  session?: ExecuteOptions['session'];
}

/** A finished query. */
export interface QueryOutcome<E> {
  encoder: E;
  columns: ResultColumn[];
  executionTimeMs: number;
  profile: QueryProfile;
}

/** Runs queries; built once by main.ts. */
export class QueryService {
  constructor(
    private readonly pool: ConnectionPool,
    private readonly source: TableSource,
    private readonly opts: QueryServiceOptions,
    private readonly metrics: SvcMetrics | null = null,
    private readonly logger: Logger | null = null,
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
  async execute<R extends { rowCount: number }>(req: QueryRequest, consume: ResultConsumer<R>): Promise<{ result: R; columns: ResultColumn[]; profile: QueryProfile; executionTimeMs: number }> {
    const started = performance.now();
    this.metrics?.queryRequests.inc();
    try {
      const show = parseShow(req.sql);
      if (show && req.refuseShow) throw new AppError('invalid', req.refuseShow);
      const out = await this.withConnection(req.signal, async (conn) => {
        if (!show) return executeSelect(conn, this.source, req, consume);
        const sql = await showSql(show, req.database, this.source, (describe) => this.columnsOf(conn, describe, req.database));
        return executeSelect(conn, this.source, { sql }, consume);
      });
      const executionTimeMs = Math.round((performance.now() - started) * 1000) / 1000;
      this.noteSlow(req.sql, executionTimeMs, out.result.rowCount);
      return { ...out, executionTimeMs };
    } catch (err) {
      this.metrics?.queryErrors.inc();
      throw err;
    }
  }

  /** How many `$n` parameters `sql` takes, from DuckDB's parse (the Postgres wire Describe). SHOW takes none. */
  async parameterCount(sql: string): Promise<number> {
    if (parseShow(sql)) return 0;
    return this.withConnection(undefined, async (conn) => parameterCount(await parseSql(conn, sql)));
  }

  /** Files, bytes and rows a query would scan (see estimate.ts). */
  async estimate(req: { sql: string; database?: string }): Promise<QueryEstimate> {
    return this.withConnection(undefined, (conn) => estimateQuery(conn, this.source, req.sql, req.database));
  }

  /** Measurements with data, optionally of one database. */
  measurements(database?: string): { database: string; measurement: string }[] {
    return this.source.measurements(database);
  }

  /** Columns and DuckDB types of `SELECT * FROM <sql's table>` (for DESCRIBE). */
  private async columnsOf(conn: DuckDBConnection, sql: string, database: string | undefined): Promise<ResultColumn[]> {
    const { columns } = await executeSelect(conn, this.source, { sql, database }, async () => ({ rowCount: 0 }));
    return columns;
  }

  /** Borrows a connection and interrupts its statement on timeout or client abort. */
  private async withConnection<T>(signal: AbortSignal | undefined, fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    return this.pool.use(async (conn) => {
      const state: { why: 'timeout' | 'aborted' | null } = { why: null };
      let repeat: ReturnType<typeof setInterval> | null = null;
      // Interrupt now and again every 50 ms: a signal that lands between two statements of the query
      // would otherwise be lost and the next statement would run on.
      const interrupt = (reason: 'timeout' | 'aborted') => {
        state.why ??= reason;
        conn.interrupt();
        repeat ??= setInterval(() => conn.interrupt(), 50);
      };
      const timer = this.opts.timeoutMs > 0 ? setTimeout(() => interrupt('timeout'), this.opts.timeoutMs) : null;
      const onAbort = () => interrupt('aborted');
      if (signal?.aborted) state.why = 'aborted';
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        if (state.why === 'aborted') throw new AppError('invalid', 'query cancelled: the client disconnected');
        return await fn(conn);
      } catch (err) {
        if (state.why === 'timeout') {
          this.metrics?.queryTimeouts.inc();
          throw new AppError('timeout', `query cancelled: it ran longer than query.timeout (${this.opts.timeoutMs} ms)`, { cause: err });
        }
        if (state.why === 'aborted') throw new AppError('invalid', 'query cancelled: the client disconnected', { cause: err });
        throw engineError(err, undefined, this.source.root);
      } finally {
        if (timer) clearTimeout(timer);
        if (repeat) clearInterval(repeat);
        signal?.removeEventListener('abort', onAbort);
        // An interrupt may have hit the query's own ROLLBACK: leave the connection clean for the next user.
        if (state.why) await conn.run('ROLLBACK').catch(() => undefined);
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

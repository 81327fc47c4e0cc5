/**
 * Continuous queries: CRUD, scheduling and execution. A run binds `$start` / `$end` to its window,
 * runs the SQL through the query engine (parse, guard, rewrite: the same rules as POST /api/v1/query,
 * bare names resolving in the source database), then replaces the window in the destination: rows of
 * the destination measurement with time in [start, end) are removed first (the shared row remover,
 * buffered rows included) and the result is written through the normal write path. Re-running a
 * window therefore replaces its rows instead of adding duplicates. Rows the query puts outside its
 * window are written but not replaced by a re-run, so bucket by the interval or finer.
 */
import { ExecutionRunner } from '../execution-runner.ts';
import type { ConnectionPool } from '../../duckdb/index.ts';
import type { ColumnBatch } from '../../ingest/index.ts';
import { conflict, invalid, notFound } from '../../lib/errors.ts';
import type { Logger } from '../../observability/index.ts';
import type { QueryService } from '../../query/index.ts';
import { assertAllowed, isReadable, UNRESTRICTED, type TableAccess } from '../../lib/table-access.ts';
import type { Caller, OwnerAccess } from '../caller.ts';
import type { DefinitionStore, Stored } from '../definition-store.ts';
import type { ExecutionBase, ExecutionStore } from '../execution-store.ts';
import type { RowRemover } from '../rewrite/row-remover.ts';
import type { Scheduler, Trigger } from '../scheduler.ts';
import { targetsOf, toCq, type ContinuousQuery, type CqInput } from './cq-schema.ts';
import { bindWindow, timingOf, windowAt, type CqWindow } from './cq-window.ts';
import { BatchCollector } from './result-batch.ts';

/** One run of a continuous query. */
export interface CqExecution extends ExecutionBase {
  query_id: number;
  window_start: string;
  window_end: string;
  dry_run: boolean;
  /** Rows the query returned (written unless dry_run). */
  rows_written: number;
  /** Destination rows of the window removed before writing (a re-run). */
  rows_replaced: number;
}

/** Collaborators, built by main.ts. */
export interface CqDeps {
  store: DefinitionStore<ContinuousQuery>;
  executions: ExecutionStore;
  queries: Pick<QueryService, 'run' | 'estimate'>;
  remover: RowRemover;
  /** The normal write path (WriteService.write). */
  write(database: string, batches: ColumnBatch[], access: TableAccess): Promise<number>;
  /** The access of a query's owner at the moment of a run. */
  ownerAccess: OwnerAccess;
  /** Maintenance connections, used to parse a query when it is saved. */
  pool: ConnectionPool;
  scheduler: Scheduler;
  /** `continuous_queries.enabled` (scheduling on) and `.schedule` (default cron). */
  settings: { enabled: boolean; schedule: string };
  logger: Logger;
}

/** A manual run: an explicit window (epoch ms; both or neither) and dry_run. */
export interface CqRunOptions {
  window?: CqWindow;
  dryRun?: boolean;
}

/** See the file comment. */
export class ContinuousQueryService {

  private readonly runs: ExecutionRunner;

  constructor(private readonly deps: CqDeps) {
    this.runs = new ExecutionRunner(deps.executions, 'continuous_query');
  }

  /** Marks runs cut off by a restart as failed and schedules every enabled query. */
  start(): void {
    this.deps.executions.failInterrupted(new Date().toISOString());
    for (const q of this.deps.store.list()) this.schedule(q);
  }

  /** Every continuous query about data `access` may read (its destination, and its source database). */
  list(access: TableAccess): Stored<ContinuousQuery>[] {
    return this.deps.store.list().filter((q) => visible(q, access));
  }

  /** One query; 404 when unknown or when `access` may not read its destination and its source database (see find). */
  get(id: number, access: TableAccess): Stored<ContinuousQuery> {
    return this.find(id, access);
  }

  /** Creates a query (400 on bad fields or SQL that is not one SELECT, 409 on a taken name) and schedules it. */
  async create(input: CqInput, caller: Caller): Promise<Stored<ContinuousQuery>> {
    const q: ContinuousQuery = { ...toCq(input), owner_token_id: caller.tokenId };
    await this.checkSql(q.query);
    await this.checkAccess(q, caller.access);
    if (this.deps.store.nameTaken(q.name)) throw conflict(`continuous query '${q.name}' already exists`);
    const stored = this.deps.store.insert(q);
    this.schedule(stored);
    return stored;
  }

  /** Updates a query; the new definition (and schedule) applies from its next run. */
  async update(id: number, input: CqInput, caller: Caller): Promise<Stored<ContinuousQuery>> {
    const q: ContinuousQuery = { ...toCq(input, this.find(id)), owner_token_id: caller.tokenId };
    await this.checkSql(q.query);
    await this.checkAccess(q, caller.access);
    if (this.deps.store.nameTaken(q.name, id)) throw conflict(`continuous query '${q.name}' already exists`);
    const stored = this.deps.store.update(id, q)!;
    this.schedule(stored);
    return stored;
  }

  /** Deletes a query, its schedule and its history (rows it wrote stay); 404 when unknown. */
  delete(id: number): void {
    this.find(id);
    this.deps.scheduler.remove(key(id));
    this.deps.store.delete(id);
    this.deps.executions.deleteOwner('continuous_query', id);
  }

  /** The newest executions of a query (404 when unknown). */
  executions(id: number, limit: number, access: TableAccess): CqExecution[] {
    this.get(id, access);
    return this.deps.executions.list<CqExecution>('continuous_query', id, limit);
  }

  /** Runs a query now over `opts.window` (default: the last complete window); 409 while a run of it is going. */
  async execute(id: number, opts: CqRunOptions = {}, trigger: 'manual' | 'schedule' = 'manual'): Promise<CqExecution> {
    const q = this.find(id);
    if (this.runs.isRunning(id)) throw conflict(`continuous query ${id} is already running`);
    const w = opts.window ?? windowAt(timingOf(q, this.deps.settings.schedule), Date.now());
    if (!(w.start < w.end)) throw invalid('start_time must be before end_time');
    const dryRun = opts.dryRun === true;
    const fields = {
      query_id: q.id,
      window_start: new Date(w.start).toISOString(),
      window_end: new Date(w.end).toISOString(),
      dry_run: dryRun,
      rows_written: 0,
      rows_replaced: 0,
    };
    const rec = await this.runs.run<CqExecution>(id, `continuous query ${id}`, trigger, fields, (rec) => this.runWindow(q, w, dryRun, rec));
    if (rec.status !== 'success') this.deps.logger.warn('continuous query run did not fully succeed', { query: q.name, status: rec.status, error: rec.error });
    return rec;
  }

  private async runWindow(q: Stored<ContinuousQuery>, w: CqWindow, dryRun: boolean, rec: CqExecution): Promise<void> {
    const t = targetsOf(q);
    // The owner's rights now, not when the query was saved: the query engine checks every table it reads.
    const access = this.deps.ownerAccess(q.owner_token_id ?? null);
    assertAllowed(access, 'write', t.destinationDatabase, [t.destinationMeasurement]);
    // Registered in query management under the CQ's name; the service runs it, so no policy binds it.
    const origin = { source: 'continuous_query', format: 'none', tokenId: null, tokenName: `continuous_query:${q.name}`, isAdmin: true, clientIp: null };
    const out = await this.deps.queries.run({ sql: bindWindow(q.query, w), database: t.sourceDatabase, access, origin }, (cols) => new BatchCollector(cols, t.destinationMeasurement));
    const batch = out.encoder.batch();
    rec.rows_written = batch.length;
    rec.status = 'success';
    if (dryRun) return;
    const startUs = w.start * 1000;
    const endUs = w.end * 1000;
    const replaced = await this.deps.remover.remove({
      database: t.destinationDatabase,
      measurement: t.destinationMeasurement,
      condition: `time >= make_timestamp(${startUs}::BIGINT) AND time < make_timestamp(${endUs}::BIGINT)`,
      columns: ['time'],
      minTime: startUs,
      maxTime: endUs - 1,
    });
    rec.rows_replaced = replaced.deleted_rows;
    if (replaced.failed_files.length > 0) {
      // The result is still written: missing rows would be worse than rows the failed files may repeat.
      rec.status = 'partial';
      rec.error = `cannot replace the window in ${replaced.failed_files.length} destination file(s): ${Object.values(replaced.errors)[0]}`;
    }
    if (batch.length > 0) await this.deps.write(t.destinationDatabase, [batch], access);
  }

  /** 400 unless `sql` (placeholders bound) parses as one SELECT; the full guard runs at each execution. */
  private async checkSql(sql: string): Promise<void> {
    const bound = bindWindow(sql, { start: 0, end: 1 });
    const text = await this.deps.pool.use(async (conn) => String((await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [bound])).getRows()[0]![0]));
    const tree = JSON.parse(text) as { error: boolean; error_message?: string; statements?: unknown[] };
    if (tree.error) throw invalid(`query: must be one SELECT statement: ${tree.error_message ?? 'syntax error'}`);
    if ((tree.statements ?? []).length !== 1) throw invalid('query: must be one SELECT statement');
  }

  /** 403 unless `access` may read every table the query reads (resolved as the engine does) and write its destination. */
  private async checkAccess(q: ContinuousQuery, access: TableAccess): Promise<void> {
    const t = targetsOf(q);
    assertAllowed(access, 'write', t.destinationDatabase, [t.destinationMeasurement]);
    await this.deps.queries.estimate({ sql: bindWindow(q.query, { start: 0, end: 1 }), database: t.sourceDatabase, access });
  }

  /** The query; 404 when unknown, and also when `access` may not see it (`visible`): a 403 would name what it reads. */
  private find(id: number, access: TableAccess = UNRESTRICTED): Stored<ContinuousQuery> {
    const q = this.deps.store.get(id);
    if (!q || !visible(q, access)) throw notFound(`continuous query ${id} not found`);
    return q;
  }

  /** (Re)arms the query's timer: its cron, or its interval; disabled queries have none. */
  private schedule(q: Stored<ContinuousQuery>): void {
    const { scheduler, settings } = this.deps;
    if (!settings.enabled || !q.enabled) return scheduler.remove(key(q.id));
    const timing = timingOf(q, settings.schedule);
    const trigger: Trigger = q.interval && !q.schedule ? { everyMs: timing.intervalMs! } : { cron: timing.cron };
    scheduler.set(key(q.id), trigger, async (at) => {
      const current = this.deps.store.get(q.id);
      // A run still going is not overlapped; the next fire tries again.
      if (!current || this.runs.isRunning(q.id)) return;
      // Windows whose latest scheduled run failed are run again first (a failed run is retried on the next fire).
      for (const w of this.owedWindows(q.id)) if ((await this.execute(q.id, { window: w }, 'schedule')).status === 'failed') break;
      await this.execute(q.id, { window: windowAt(timingOf(current, settings.schedule), at.getTime()) }, 'schedule');
    });
  }

  /** Windows (oldest first, at most MAX_RETRIES) whose newest scheduled execution among the recent ones failed. */
  private owedWindows(id: number): CqWindow[] {
    const newest = new Map<string, CqExecution>();
    for (const e of this.deps.executions.list<CqExecution>('continuous_query', id, RETRY_LOOKBACK))
      if (!e.dry_run && !newest.has(`${e.window_start}/${e.window_end}`)) newest.set(`${e.window_start}/${e.window_end}`, e);
    return [...newest.values()]
      .filter((e) => e.status === 'failed' && e.trigger === 'schedule')
      .map((e) => ({ start: Date.parse(e.window_start), end: Date.parse(e.window_end) }))
      .sort((a, b) => a.start - b.start)
      .slice(0, MAX_RETRIES);
  }
}

const key = (id: number) => `continuous_query:${id}`;
/** Recent executions looked at for failed windows, and the most re-run per fire. */
const RETRY_LOOKBACK = 100;
const MAX_RETRIES = 5;

/** Whether `access` may see `q` (see ContinuousQueryService.get). */
function visible(q: ContinuousQuery, access: TableAccess): boolean {
  const t = targetsOf(q);
  return isReadable(access, t.sourceDatabase, null) && isReadable(access, t.destinationDatabase, t.destinationMeasurement);
}

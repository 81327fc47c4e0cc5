/**
 * One SELECT on one connection: parse -> guard -> find measurements -> evaluate time bounds -> plan
 * files + buffered rows in one tick -> (in a transaction when rows are buffered: load them into temp
 * tables) -> rewrite each reference into a subquery over its sources -> run -> encode -> roll back.
 */
import { resultChunks, type DuckDBConnection, type DuckDBPreparedStatement, type ResultChunk, type ResultChunks } from '../duckdb/index.ts';
import { loadBatchesIntoTable } from '../parquet/index.ts';
import { sameFlatSchema } from './file-schemas.ts';
import { resultColumns, type ResultColumn } from './encode/result.ts';
import { engineError } from './engine-errors.ts';
import { boundsOf, planQuery, type PlannedRef, type TimeBounds } from './plan.ts';
import { guardTree } from './sql/guard.ts';
import { parseSql } from './sql/parse.ts';
import { findMeasurementRefs, type MeasurementRef } from './sql/references.ts';
import { boundsTree, ident, replaceWithQuery, replaceWithSource } from './sql/rewrite.ts';
import { bindSession, type BoundParam, type QuerySession } from './sql/session.ts';
import { catalogSql, CATALOG_SCHEMAS } from './catalog-tables.ts';
import { columnsForEmpty } from './sql/column-refs.ts';
import { cachedTemplate, fileMarker, fillTemplate, storeTemplate, templateKey } from './sql/template.ts';
import { treeJson, type SerializedSql } from './sql/tree.ts';
import type { TableSource } from './table-source.ts';
import type { RenderedResult } from './encode/json-render.ts';
import { setBounded } from '../lib/bounded-map.ts';
import { readableDatabases, readableMeasurements, type TableAccess } from '../lib/table-access.ts';

/** Anything that consumes result chunks (an async `add` is awaited before the next chunk). */
export interface ChunkEncoder {
  add(chunk: ResultChunk): void | Promise<void>;
  /** Reads every chunk still held (they are freed once the result is done); encoders that keep none omit it. */
  drain?(): Promise<void>;
  readonly rowCount: number;
}

/**
 * The next result chunk, or null after the last one. A chunk's memory is DuckDB's: release it once
 * read (encoders copy what they keep); chunks never released are freed when the result is done.
 */
export type NextChunk = () => Promise<ResultChunk | null>;

/**
 * Reads a result: the connection, the buffered-row tables and the file leases stay held until the
 * promise settles (a streamed response keeps them while it sends). `profile()` is the profile so far.
 */
export type ResultConsumer<R> = (columns: ResultColumn[], next: NextChunk, profile: () => QueryProfile, info: ResultInfo) => Promise<R>;

/** What is known about a result before its first row is read. */
export interface ResultInfo {
  /** The result was cut at ExecuteOptions.maxRows (more rows existed). */
  rowsCapped: boolean;
}

/** Where the time went and what was read (MessagePack `profile`, logs). */
export interface QueryProfile {
  parse_ms: number;
  plan_ms: number;
  execute_ms: number;
  files: number;
  buffered_rows: number;
}

/** Options of one execution. */
export interface ExecuteOptions {
  sql: string;
  database?: string;
  /** What the caller may read: every referenced measurement is checked (sql/references.ts). */
  access: TableAccess;
  /** false: read every file (the pruning-equivalence test compares both). */
  prune?: boolean;
  /**
   * Has DuckDB compute some result columns for the encoder (see encode/json-render.ts): given the
   * query's columns, a SELECT list over them (named c0, c1, ...) and the columns it yields, or null.
   */
  render?: (columns: ResultColumn[]) => RenderedResult | null;
  /** Cut the result at this many rows (a governance policy's max_rows_per_query). */
  maxRows?: number | null;
  /** Values of `$n` parameters (the Postgres wire protocol's Bind); without it parameters are refused. */
  params?: readonly BoundParam[];
  /** The wire-protocol session: session functions and `user` answer from it (see sql/session.ts). */
  session?: QuerySession | null;
  /**
   * Only the result's columns, from DuckDB's prepare of the final SQL: nothing runs and `consume` gets
   * no chunk (the Postgres wire Describe of a statement, which must not run the query).
   */
  describeOnly?: boolean;
}

/** Runs one user SELECT on `conn` and hands its result, chunk by chunk, to `consume`. */
export async function executeSelect<R>(
  conn: DuckDBConnection,
  source: TableSource,
  opts: ExecuteOptions,
  consume: ResultConsumer<R>,
): Promise<{ result: R; columns: ResultColumn[]; profile: QueryProfile; rowsCapped: boolean }> {
  const t0 = performance.now();
  const tree = await parseSql(conn, opts.sql);
  const bound = opts.params !== undefined || !!opts.session;
  if (bound) bindSession(tree, opts.params ?? [], opts.session ?? null);
  guardTree(tree);
  const refs = await answerCatalogRefs(conn, source, opts, findMeasurementRefs(tree, opts.database, opts.access));
  // Bound values and catalog rows are not in the SQL text: such a query must not be cached by it.
  const cacheable = !bound && refs.catalog === 0;
  const bounds = await evaluateBounds(conn, refs.measurements, cacheable ? templateKey(opts.sql, opts.database, []) : null);
  // Manifest and buffer snapshot in one synchronous step (see table-source.ts).
  const plan = planQuery(source, refs.measurements, bounds, opts.prune !== false);
  const keys = [...new Set(plan.refs.flatMap((r) => r.files.map((f) => f.key)))];
  const release = source.lease(keys);
  const t1 = performance.now();
  const names = new Map<string, string>();
  // Buffered rows live in temp tables for the query's duration; a transaction drops them on the way out.
  const inTransaction = plan.buffers.size > 0;
  let chunks: ResultChunks | null = null;
  try {
    const paths = await source.localPaths(keys);
    const pathOf = new Map(keys.map((k, i) => [k, paths[i]!] as const));
    if (inTransaction) await conn.run('BEGIN TRANSACTION');
    const tables = new Map<string, string>();
    let b = 0;
    for (const [key, buf] of plan.buffers) {
      // Stable per connection (temp tables are connection-local, dropped by the ROLLBACK, created
      // OR REPLACE), so the rewritten SQL does not change from one run to the next.
      const table = `__svc_b${b++}_`;
      names.set(table, `${buf.database}.${buf.measurement}`);
      await loadBatchesIntoTable(conn, table, buf.batches);
      tables.set(key, table);
    }
    const files = plan.refs.map((r) => r.files.map((f) => pathOf.get(f.key)!));
    // Files of one measurement may differ in columns and types (it gains columns, a type widens):
    // those are read by column name; files sharing one schema skip that (see file-schemas.ts).
    const byName: boolean[] = [];
    for (const f of files) byName.push(f.length > 1 && !(await sameFlatSchema(conn, f)));
    const uncapped = fillTemplate(await rewrittenTemplate(conn, tree, opts, plan.refs, tables, byName, cacheable), files);
    // A row cap is a LIMIT around the query (the engine stops early), not rows dropped after it ran.
    const maxRows = opts.maxRows ?? null;
    const finalSql = maxRows === null ? uncapped : `SELECT * FROM (${uncapped}) AS __svc_cap LIMIT ${maxRows}`;
    const t2 = performance.now();
    const failed = (err: unknown) => {
      throw engineError(err, names, source.root);
    };
    if (opts.describeOnly) {
      const described = preparedColumns(await conn.prepare(finalSql).catch(failed));
      const profile = (): QueryProfile => ({ parse_ms: round(t1 - t0), plan_ms: round(t2 - t1), execute_ms: 0, files: 0, buffered_rows: 0 });
      const out = await consume(described, async () => null, profile, { rowsCapped: false });
      return { result: out, columns: described, profile: profile(), rowsCapped: false };
    }
    // Materialized, not streamed: a streamed result (conn.stream + fetchChunk) would let DuckDB's scan
    // overlap the encoding, but node-bindings returns null both at the end and when the query fails
    // mid-way (duckdb_result_error is not exposed), so a failing query would look like a shorter
    // result. Here every engine error, timeout and cancellation surfaces before the first row is read.
    let columns: ResultColumn[] | null = null;
    let run = () => conn.run(finalSql);
    // Only SQL over files alone is remembered: buffered rows live in temp tables that change.
    const overFiles = plan.buffers.size === 0;
    const known = overFiles ? knownResults.get(finalSql) : undefined;
    // The query's own columns: known before it runs from a prepared statement or, for SQL over files
    // only, from an earlier run (files never change, so neither do the types).
    let original = known?.columns;
    if (opts.render && !(known && known.rows <= SMALL_RESULT_ROWS)) {
      if (original === undefined) {
        const prepared = await conn.prepare(finalSql).catch(failed);
        original = preparedColumns(prepared);
        run = () => prepared.run();
      }
      const rendered = opts.render(original);
      if (rendered) {
        const wrapped = `SELECT ${rendered.select} FROM (${finalSql}) AS __svc_q(${original.map((_, i) => `c${i}`).join(', ')})`;
        run = () => conn.run(wrapped);
        columns = rendered.columns;
      }
    }
    const result = await run().catch(failed);
    original ??= resultColumns(result.columnNames(), result.columnTypes());
    if (overFiles && !known) remember(finalSql, original);
    columns ??= original;
    // Exactly maxRows rows: whether more existed takes one probe past the cap.
    const rowsCapped = maxRows !== null && result.rowCount >= maxRows && (await hasRowsBeyond(conn, uncapped, maxRows).catch(failed));
    chunks = resultChunks(result, columns.length);
    const all = chunks;
    let at = 0;
    let rows = 0;
    const next: NextChunk = async () => {
      if (at >= all.count) return null;
      const chunk = all.chunk(at++);
      rows += chunk.rowCount;
      return chunk;
    };
    const profile = (): QueryProfile => ({
      parse_ms: round(t1 - t0),
      plan_ms: round(t2 - t1),
      execute_ms: round(performance.now() - t2),
      files: plan.refs.reduce((n, r) => n + r.files.length, 0),
      buffered_rows: [...plan.buffers.values()].reduce((n, x) => n + x.rows, 0),
    });
    const out = await consume(columns, next, profile, { rowsCapped });
    if (at === all.count) {
      const entry = knownResults.get(finalSql);
      if (entry) entry.rows = rows;
    }
    return { result: out, columns, profile: profile(), rowsCapped };
  } finally {
    chunks?.close();
    if (inTransaction) await conn.run('ROLLBACK').catch(() => undefined);
    release();
  }
}

/** A prepared statement's result columns, known before it runs. */
function preparedColumns(prepared: DuckDBPreparedStatement): ResultColumn[] {
  const n = prepared.columnCount;
  return resultColumns(
    Array.from({ length: n }, (_, i) => prepared.columnName(i)),
    Array.from({ length: n }, (_, i) => prepared.columnType(i)),
  );
}

/** True when `sql` yields more than `n` rows (reads at most n + 1 of them). */
async function hasRowsBeyond(conn: DuckDBConnection, sql: string, n: number): Promise<boolean> {
  const rows = (await conn.runAndReadAll(`SELECT count(*) FROM (SELECT 1 FROM (${sql}) AS __svc_probe LIMIT 1 OFFSET ${n})`)).getRows();
  return Number(rows[0]?.[0] ?? 0) > 0;
}

/**
 * The rewritten SQL with a marker per file list (see sql/template.ts): from the cache when the same
 * SQL ran before with references of the same shape, else rewritten in the tree and deserialized.
 */
async function rewrittenTemplate(
  conn: DuckDBConnection,
  tree: SerializedSql,
  opts: ExecuteOptions,
  refs: readonly PlannedRef[],
  tables: ReadonlyMap<string, string>,
  unionByName: readonly boolean[],
  cacheable: boolean,
): Promise<string> {
  const shapes = refs.map((r, i) => `${r.files.length === 0 ? '-' : unionByName[i] ? 'u' : 'f'}${r.bufferKey ? tables.get(r.bufferKey)! : ''}`);
  const key = cacheable ? templateKey(opts.sql, opts.database, shapes) : null;
  const cached = cachedTemplate(key);
  if (cached !== undefined) return cached;
  refs.forEach((r, i) =>
    replaceWithSource(r.ref, {
      files: r.files.length > 0 ? [fileMarker(i)] : [],
      unionByName: unionByName[i]!,
      bufferTable: r.bufferKey ? tables.get(r.bufferKey)! : null,
      // A measurement with no data answers zero rows, also when the query names its columns.
      emptyColumns: r.files.length === 0 && !r.bufferKey ? columnsForEmpty(tree, r.ref, refs.length) : undefined,
    }),
  );
  const template = String((await conn.runAndReadAll('SELECT json_deserialize_sql($1::VARCHAR)', [treeJson(tree)])).getRows()[0]![0]);
  storeTemplate(key, template, refs.flatMap((r, i) => (r.files.length > 0 ? [i] : [])));
  return template;
}

/**
 * Replaces references to `information_schema.*` / `pg_catalog.*` with relations over svc's metadata
 * (catalog-tables.ts); returns the measurement references left and how many were catalog ones.
 */
async function answerCatalogRefs(
  conn: DuckDBConnection,
  source: TableSource,
  opts: ExecuteOptions,
  refs: MeasurementRef[],
): Promise<{ measurements: MeasurementRef[]; catalog: number }> {
  const isCatalog = (r: MeasurementRef) => String(r.node.schema_name ?? '') !== '' && CATALOG_SCHEMAS.has(r.database.toLowerCase());
  const catalog = refs.filter(isCatalog);
  // The catalog lists only the databases and measurements the caller may read (as SHOW does).
  const visible = { databases: () => readableDatabases(source.databases(), opts.access), measurements: (db?: string) => readableMeasurements(source.measurements(db), opts.access) };
  const describe = async (database: string, measurement: string) =>
    (await executeSelect(conn, source, { sql: `SELECT * FROM ${ident(database)}.${ident(measurement)} LIMIT 0`, access: opts.access }, async () => ({ rowCount: 0 }))).columns;
  for (const r of catalog) {
    const sql = await catalogSql(r.database, r.measurement, visible, opts.session?.user ?? 'svc', describe);
    replaceWithQuery(r, (await parseSql(conn, sql)).statements[0]!.node);
  }
  // Filtered by identity: a replaced node no longer carries its schema name.
  return { measurements: refs.filter((r) => !catalog.includes(r)), catalog: catalog.length };
}

/**
 * Recent SQL over files only, by final SQL text: its result columns and how many rows it returned
 * last time (Infinity until one run was read to the end).
 */
const knownResults = new Map<string, { columns: ResultColumn[]; rows: number }>();

/**
 * A result known to be at most this long skips the rendering wrapper (opts.render): planning it
 * costs 0.1-0.4 ms, more than formatting a few thousand values in the encoder, which writes the
 * same bytes (see encode/json-render.ts). A result that grew past it is rendered from its next run.
 */
const SMALL_RESULT_ROWS = 4096;

/** SQL longer than this (thousands of files) is not kept: the cache stays a few MB at most. */
const MAX_REMEMBERED_SQL = 16_384;

function remember(sql: string, columns: ResultColumn[]): void {
  if (sql.length > MAX_REMEMBERED_SQL) return;
  setBounded(knownResults, sql, { columns, rows: Infinity }, 256);
}

/** Evaluated condition values of recent queries whose conditions do not read the clock, by `cacheKey`. */
const recentValues = new Map<string, (number | null)[]>();

/**
 * Evaluates every condition value in DuckDB itself, in one statement; no conditions, no statement.
 * Values that do not read the clock are constants of the SQL text (the configuration is locked),
 * so with a `cacheKey` they are remembered and a repeated query skips the round trip.
 */
export async function evaluateBounds(conn: DuckDBConnection, refs: readonly MeasurementRef[], cacheKey: string | null = null): Promise<TimeBounds[]> {
  const conditions = refs.flatMap((r) => r.conditions);
  const bt = boundsTree(conditions.map((c) => c.value));
  if (!bt) return refs.map(() => ({}));
  const key = cacheKey !== null && !conditions.some((c) => c.usesNow) ? cacheKey : null;
  let values = key === null ? undefined : recentValues.get(key);
  if (values === undefined) {
    try {
      const row = (await conn.runAndReadAll('SELECT * FROM json_execute_serialized_sql($1::VARCHAR)', [treeJson(bt)])).getRows()[0] ?? [];
      values = conditions.map((_, i) => micros(row[i]));
    } catch {
      // A value DuckDB cannot evaluate alone: no pruning; the query itself reports any real error.
      return refs.map(() => ({}));
    }
    if (key !== null) setBounded(recentValues, key, values, 256);
  }
  let k = 0;
  return refs.map((r) => boundsOf(r.conditions, r.conditions.map(() => values[k++] ?? null)));
}

function micros(v: unknown): number | null {
  const m = (v as { micros?: bigint } | null)?.micros;
  return typeof m === 'bigint' ? Number(m) : null;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

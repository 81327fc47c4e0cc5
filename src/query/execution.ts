/**
 * One SELECT on one connection: parse -> guard -> find measurements -> rewrite -> (in a transaction)
 * evaluate time bounds, plan files + buffered rows in one tick, load the buffered rows, create the
 * views -> stream the result into an encoder -> roll back (dropping every temporary object).
 */
import type { DuckDBConnection, DuckDBDataChunk } from '../duckdb/index.ts';
import { loadBatchesIntoTable } from '../parquet/index.ts';
import { resultColumns, type ResultColumn } from './encode/result.ts';
import { engineError } from './engine-errors.ts';
import { boundsOf, planQuery, type PlannedQuery, type TimeBounds } from './plan.ts';
import { guardTree } from './sql/guard.ts';
import { parseSql } from './sql/parse.ts';
import { findMeasurementRefs, type MeasurementRef } from './sql/references.ts';
import { boundsTree, ident, pointAtView, viewBody } from './sql/rewrite.ts';
import { treeJson } from './sql/tree.ts';
import type { TableSource } from './table-source.ts';

/** Anything that consumes result chunks. */
export interface ChunkEncoder {
  add(chunk: DuckDBDataChunk): void;
  readonly rowCount: number;
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
  /** false: read every file (the pruning-equivalence test compares both). */
  prune?: boolean;
}

let nextQueryId = 0;

/** Runs one user SELECT on `conn` and feeds the result to the encoder `makeEncoder` builds. */
export async function executeSelect<E extends ChunkEncoder>(
  conn: DuckDBConnection,
  source: TableSource,
  opts: ExecuteOptions,
  makeEncoder: (columns: ResultColumn[]) => E,
): Promise<{ encoder: E; columns: ResultColumn[]; profile: QueryProfile }> {
  const t0 = performance.now();
  const tree = await parseSql(conn, opts.sql);
  guardTree(tree);
  const refs = findMeasurementRefs(tree, opts.database);
  const id = nextQueryId++;
  const names = new Map<string, string>();
  refs.forEach((r, i) => {
    const view = `__svc_q${id}_v${i}`;
    names.set(view, `${r.database}.${r.measurement}`);
    pointAtView(r, view);
  });
  const values = refs.flatMap((r) => r.conditions.map((c) => c.value));
  const bt = boundsTree(values);
  const t1 = performance.now();
  await conn.run('BEGIN TRANSACTION');
  try {
    const texts = await conn.runAndReadAll(
      bt ? 'SELECT json_deserialize_sql($1::VARCHAR), json_deserialize_sql($2::VARCHAR)' : 'SELECT json_deserialize_sql($1::VARCHAR)',
      bt ? [treeJson(tree), treeJson(bt)] : [treeJson(tree)],
    );
    const [finalSql, boundsSql] = texts.getRows()[0]! as string[];
    const bounds = boundsSql ? await evaluateBounds(conn, boundsSql, refs) : refs.map(() => ({}));
    const plan = planQuery(source, refs, bounds, opts.prune !== false);
    await materialize(conn, plan, id, names);
    const t2 = performance.now();
    // Materialized: DuckDB runs the whole query on its threads, then chunks are read synchronously
    // (one async hop per 2048-row chunk costs more than the encoding itself).
    const result = await conn.run(finalSql!).catch((err) => {
      throw engineError(err, names);
    });
    const columns = resultColumns(result.columnNames(), result.columnTypes());
    const encoder = makeEncoder(columns);
    const count = result.chunkCount;
    for (let i = 0; i < count; i++) encoder.add(result.getChunk(i));
    const t3 = performance.now();
    const profile: QueryProfile = {
      parse_ms: round(t1 - t0),
      plan_ms: round(t2 - t1),
      execute_ms: round(t3 - t2),
      files: plan.refs.reduce((n, r) => n + r.files.length, 0),
      buffered_rows: [...plan.buffers.values()].reduce((n, b) => n + b.rows, 0),
    };
    return { encoder, columns, profile };
  } finally {
    await conn.run('ROLLBACK').catch(() => undefined);
  }
}

/** Evaluates every condition value in DuckDB (same transaction as the query: same now()). */
async function evaluateBounds(conn: DuckDBConnection, sql: string, refs: readonly MeasurementRef[]): Promise<TimeBounds[]> {
  let row: unknown[] = [];
  try {
    row = (await conn.runAndReadAll(sql)).getRows()[0] ?? [];
  } catch {
    // A value DuckDB cannot evaluate alone: no pruning; the query itself reports any real error.
    return refs.map(() => ({}));
  }
  let k = 0;
  return refs.map((r) => boundsOf(r.conditions, r.conditions.map(() => micros(row[k++]))));
}

function micros(v: unknown): number | null {
  const m = (v as { micros?: bigint } | null)?.micros;
  return typeof m === 'bigint' ? Number(m) : null;
}

/** Loads buffered rows into temp tables and creates one temp view per reference. */
async function materialize(conn: DuckDBConnection, plan: PlannedQuery, id: number, names: Map<string, string>): Promise<void> {
  const tables = new Map<string, string>();
  let b = 0;
  for (const [key, buf] of plan.buffers) {
    const table = `__svc_q${id}_b${b++}`;
    names.set(table, `${buf.database}.${buf.measurement}`);
    await loadBatchesIntoTable(conn, table, buf.batches);
    tables.set(key, table);
  }
  const ddl = plan.refs.map((r, i) => {
    const body = viewBody(
      r.files.map((f) => f.path),
      r.bufferKey ? tables.get(r.bufferKey)! : null,
    );
    return `CREATE TEMP VIEW ${ident(`__svc_q${id}_v${i}`)} AS ${body}`;
  });
  if (ddl.length > 0) await conn.run(ddl.join(';\n'));
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

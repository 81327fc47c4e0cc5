/**
 * One SELECT on one connection: parse -> guard -> find measurements -> evaluate time bounds -> plan
 * files + buffered rows in one tick -> (in a transaction when rows are buffered: load them into temp
 * tables) -> rewrite each reference into a subquery over its sources -> run -> encode -> roll back.
 */
import type { DuckDBConnection, DuckDBDataChunk } from '../duckdb/index.ts';
import { loadBatchesIntoTable } from '../parquet/index.ts';
import { resultColumns, type ResultColumn } from './encode/result.ts';
import { engineError } from './engine-errors.ts';
import { boundsOf, planQuery, type TimeBounds } from './plan.ts';
import { guardTree } from './sql/guard.ts';
import { parseSql } from './sql/parse.ts';
import { findMeasurementRefs, type MeasurementRef } from './sql/references.ts';
import { boundsTree, replaceWithSource } from './sql/rewrite.ts';
import { columnsForEmpty } from './sql/column-refs.ts';
import { treeJson } from './sql/tree.ts';
import type { SourceFile, TableSource } from './table-source.ts';

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
  const T:number[]=[performance.now()];
  const tree = await parseSql(conn, opts.sql);T.push(performance.now());
  guardTree(tree);
  const refs = findMeasurementRefs(tree, opts.database);
  const id = nextQueryId++;
  T.push(performance.now());const bounds = await evaluateBounds(conn, refs);T.push(performance.now());
  // Manifest and buffer snapshot in one synchronous step (see table-source.ts).
  const plan = planQuery(source, refs, bounds, opts.prune !== false);
  const keys = [...new Set(plan.refs.flatMap((r) => r.files.map((f) => f.key)))];
  const release = source.lease(keys);
  const t1 = performance.now();
  const names = new Map<string, string>();
  // Buffered rows live in temp tables for the query's duration; a transaction drops them on the way out.
  const inTransaction = plan.buffers.size > 0;
  try {
    const paths = await source.localPaths(keys);T.push(performance.now());
    const pathOf = new Map(keys.map((k, i) => [k, paths[i]!] as const));
    if (inTransaction) await conn.run('BEGIN TRANSACTION');
    const tables = new Map<string, string>();
    let b = 0;
    for (const [key, buf] of plan.buffers) {
      const table = `__svc_q${id}_b${b++}`;
      names.set(table, `${buf.database}.${buf.measurement}`);
      await loadBatchesIntoTable(conn, table, buf.batches);
      tables.set(key, table);
    }
    for (const r of plan.refs)
      replaceWithSource(r.ref, {
        files: r.files.map((f) => pathOf.get(f.key)!),
        unionByName: needsUnion(r.files),
        bufferTable: r.bufferKey ? tables.get(r.bufferKey)! : null,
        // A measurement with no data answers zero rows, also when the query names its columns.
        emptyColumns: r.files.length === 0 && !r.bufferKey ? columnsForEmpty(tree, r.ref, plan.refs.length) : undefined,
      });
    T.push(performance.now());const finalSql = String((await conn.runAndReadAll('SELECT json_deserialize_sql($1::VARCHAR)', [treeJson(tree)])).getRows()[0]![0]);
    const t2 = performance.now();T.push(t2);
    // Materialized: DuckDB runs the whole query on its threads, then chunks are read synchronously
    // (one async hop per 2048-row chunk costs more than the encoding itself).
    const result = await conn.run(finalSql).catch((err) => {
      throw engineError(err, names, source.root);
    });
    T.push(performance.now());const columns = resultColumns(result.columnNames(), result.columnTypes());
    const encoder = makeEncoder(columns);
    const count = result.chunkCount;
    for (let i = 0; i < count; i++) encoder.add(result.getChunk(i));
    const t3 = performance.now();T.push(t3);if(process.env.SVC_T)console.error('T '+T.slice(1).map((x,i)=>(x-T[i]!).toFixed(3)).join(' '));
    const profile: QueryProfile = {
      parse_ms: round(t1 - t0),
      plan_ms: round(t2 - t1),
      execute_ms: round(t3 - t2),
      files: plan.refs.reduce((n, r) => n + r.files.length, 0),
      buffered_rows: [...plan.buffers.values()].reduce((n, x) => n + x.rows, 0),
    };
    return { encoder, columns, profile };
  } finally {
    if (inTransaction) await conn.run('ROLLBACK').catch(() => undefined);
    release();
  }
}

/**
 * Several files are read by column name: a measurement gains columns over time and the same name
 * may widen its type; the manifest knows names but not types, and cached footers keep this cheap.
 */
function needsUnion(files: readonly SourceFile[]): boolean {
  return files.length > 1;
}

/** Evaluates every condition value in DuckDB itself, in one statement; no conditions, no statement. */
export async function evaluateBounds(conn: DuckDBConnection, refs: readonly MeasurementRef[]): Promise<TimeBounds[]> {
  const bt = boundsTree(refs.flatMap((r) => r.conditions.map((c) => c.value)));
  if (!bt) return refs.map(() => ({}));
  let row: unknown[] = [];
  try {
    row = (await conn.runAndReadAll('SELECT * FROM json_execute_serialized_sql($1::VARCHAR)', [treeJson(bt)])).getRows()[0] ?? [];
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

const round = (ms: number) => Math.round(ms * 1000) / 1000;

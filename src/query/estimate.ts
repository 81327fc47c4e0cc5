/**
 * What a query would read, from the manifest alone (nothing is executed):
 *   { success, estimated_rows, files, bytes, buffered_rows, measurements: [
 *       { database, measurement, files, rows, bytes, buffered_rows, min_time, max_time } ] }
 * `estimated_rows` counts rows to scan (file rows after time pruning, plus buffered rows): an upper
 * bound of what DuckDB reads, not the size of the result. `min_time`/`max_time` are the pruning
 * bounds derived from the WHERE clause (RFC 3339, null when open). A measurement referenced twice
 * appears twice, once per reference.
 */
import type { DuckDBConnection } from '../duckdb/index.ts';
import type { TableAccess } from '../lib/table-access.ts';
import { evaluateBounds } from './execution.ts';
import { planQuery } from './plan.ts';
import { guardTree } from './sql/guard.ts';
import { parseSql } from './sql/parse.ts';
import { findMeasurementRefs } from './sql/references.ts';
import type { TableSource } from './table-source.ts';

/** Estimate of one reference. */
export interface RefEstimate {
  database: string;
  measurement: string;
  files: number;
  rows: number;
  bytes: number;
  buffered_rows: number;
  min_time: string | null;
  max_time: string | null;
}

/** The estimate response body. */
export interface QueryEstimate {
  success: true;
  estimated_rows: number;
  files: number;
  bytes: number;
  buffered_rows: number;
  measurements: RefEstimate[];
}

const iso = (us: number | undefined) => (us === undefined ? null : new Date(Math.floor(us / 1000)).toISOString());

/** Plans `sql` without running it and sums what it would read. */
export async function estimateQuery(conn: DuckDBConnection, source: TableSource, sql: string, database: string | undefined, access: TableAccess): Promise<QueryEstimate> {
  const tree = await parseSql(conn, sql);
  guardTree(tree);
  const refs = findMeasurementRefs(tree, database, access);
  const bounds = await evaluateBounds(conn, refs);
  const plan = planQuery(source, refs, bounds);
  const measurements = plan.refs.map((r): RefEstimate => {
    const buffered = r.bufferKey ? plan.buffers.get(r.bufferKey)!.rows : 0;
    return {
      database: r.ref.database,
      measurement: r.ref.measurement,
      files: r.files.length,
      rows: r.files.reduce((n, f) => n + f.rows, 0) + buffered,
      bytes: r.files.reduce((n, f) => n + f.bytes, 0),
      buffered_rows: buffered,
      min_time: iso(r.bounds.minTime),
      max_time: iso(r.bounds.maxTime),
    };
  });
  const sum = (k: 'files' | 'rows' | 'bytes' | 'buffered_rows') => measurements.reduce((n, m) => n + m[k], 0);
  return { success: true, estimated_rows: sum('rows'), files: sum('files'), bytes: sum('bytes'), buffered_rows: sum('buffered_rows'), measurements };
}

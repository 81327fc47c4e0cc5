/**
 * Loads ColumnBatches into a DuckDB table through an appender, filling whole data chunks by copying
 * typed arrays: the flush path writes Parquet from this table, and the query engine loads buffered
 * rows with it (read-your-writes). Batches may differ in schema: see schema.ts for the union rules.
 */
import { DuckDBDataChunk, type DuckDBConnection, TIMESTAMP } from '../duckdb/index.ts';
import type { ColumnBatch } from '../ingest/index.ts';
import { CHUNK_ROWS, FillState, fillChunk, planColumns } from './chunk-fill.ts';
import type { SchemaColumn } from './schema.ts';

/** How string columns are typed in the table: `enum` (faster to load; cast to VARCHAR when read) or `varchar`. */
export interface LoadOptions {
  strings?: 'enum' | 'varchar';
  /** Create a TEMP table (default true). */
  temp?: boolean;
}

/** A loaded table: its name, row count, and each column with the SQL type it got (`time` first, TIMESTAMP). */
export interface LoadedTable {
  table: string;
  rows: number;
  columns: (SchemaColumn & { sqlType: string })[];
}

/** Quotes a SQL identifier. */
export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Creates (or replaces) table `table` with `time TIMESTAMP` plus the union of the batches' columns and
 * appends every row, in batch order. Missing columns are NULL; see schema.ts for type widening.
 */
export async function loadBatchesIntoTable(conn: DuckDBConnection, table: string, batches: readonly ColumnBatch[], opts: LoadOptions = {}): Promise<LoadedTable> {
  const total = batches.reduce((n, b) => n + b.length, 0);
  const plans = planColumns(batches, total, opts.strings ?? 'varchar');
  const ddl = ['time TIMESTAMP', ...plans.map((p) => `${quoteIdent(p.name)} ${p.sqlType}`)].join(', ');
  await conn.run(`CREATE OR REPLACE ${opts.temp === false ? '' : 'TEMP '}TABLE ${quoteIdent(table)} (${ddl})`);
  const appender = await conn.createAppender(table, opts.temp === false ? null : 'main', opts.temp === false ? null : 'temp');
  try {
    const types = [TIMESTAMP, ...plans.map((p) => p.chunkType)];
    // One chunk, refilled for every 2048 rows: creating chunks costs more than filling them.
    const chunk = DuckDBDataChunk.create(types, Math.min(CHUNK_ROWS, Math.max(total, 1)));
    const state = new FillState();
    for (let g = 0; g < total; g += CHUNK_ROWS) {
      fillChunk(chunk, batches, plans, state, g, Math.min(CHUNK_ROWS, total - g));
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  return { table, rows: total, columns: [{ name: 'time', type: 'float64', tag: false, sqlType: 'TIMESTAMP' }, ...plans] };
}


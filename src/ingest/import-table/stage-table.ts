/**
 * Stages a file that DuckDB can read (CSV, Parquet) as a table `time TIMESTAMP, <typed columns>` in
 * one pass, then checks it: no rows, or a time that is missing or cannot be converted, fail the
 * import with the row at fault and its original text. The table is a plain (non-temporary) table
 * so the committer's parallel connections can each write some hours of it.
 */
import type { DuckDBConnection } from '../../duckdb/index.ts';
import { invalid } from '../../lib/errors.ts';
import { ident, planColumns, type SourceColumn, type StagedColumn } from './column-plan.ts';
import { epochUnitOf, MAX_TIME_MICROS, timeExpression, timeKindOf, type TimeFormat } from './time-expression.ts';

/** A staged import: table name, row count, columns (`time` first), time range in epoch µs. */
export interface StagedTable {
  table: string;
  rows: number;
  columns: StagedColumn[];
  minTime: number;
  maxTime: number;
}

/** What the format reader supplies: how to read the source, and how to point at a row in messages. */
export interface StageSource {
  /** A FROM-clause table function over the file, e.g. `read_parquet('/tmp/x')`. */
  from: string;
  columns: readonly SourceColumn[];
  timeColumn: string;
  timeFormat: TimeFormat | null;
  /** Text for messages about data row `row` (0-based), e.g. `line 7`. */
  where(row: number): string;
  /** The original text of the time value of data row `row`, for messages. */
  rawTime(row: number): Promise<string | null>;
  /** Added to the unknown-time-column message. */
  missingHint?: string;
  /** Runs after the table is filled and before it is checked (CSV: rows DuckDB rejected fail here first). */
  afterLoad?: () => Promise<void>;
}

/** Creates `table` from `source` and validates it (see the file comment); drops it again on failure. */
export async function stageTable(conn: DuckDBConnection, table: string, source: StageSource): Promise<StagedTable> {
  const { time, columns } = planColumns(source.columns, source.timeColumn, source.missingHint);
  const kind = timeKindOf(time.name, time.duckType);
  if (source.timeFormat && (kind === 'timestamp' || kind === 'timestamptz'))
    throw invalid(`time_format ${source.timeFormat} is for epoch numbers, but time column '${time.name}' holds timestamps: leave time_format out`);
  let unit = source.timeFormat;
  if (!unit && (kind === 'integer' || kind === 'number')) unit = await sampleUnit(conn, source.from, ident(time.name));
  const select = [`${timeExpression(ident(time.name), kind, unit)} AS time`, ...columns.map((c) => `${c.expr} AS ${ident(c.name)}`)];
  await conn.run(`CREATE OR REPLACE TABLE ${ident(table)} AS SELECT ${select.join(', ')} FROM ${source.from}`);
  try {
    await source.afterLoad?.();
    const stats = (
      await conn.runAndReadAll(
        `SELECT count(*)::DOUBLE, min(rowid) FILTER (WHERE time IS NULL)::DOUBLE, epoch_us(min(time))::DOUBLE, epoch_us(max(time))::DOUBLE FROM ${ident(table)}`,
      )
    ).getRows()[0]!;
    const [rows, badRow, minTime, maxTime] = stats.map((v) => (v === null ? null : Number(v)));
    if (!rows) throw invalid('the file has a header but no data rows');
    if (badRow !== null && badRow !== undefined) throw await badTime(source, time.name, badRow, unit);
    return {
      table,
      rows,
      columns: [{ name: 'time', type: 'float64', tag: false, sqlType: 'TIMESTAMP' }, ...columns.map(({ expr: _, ...c }) => c)],
      minTime: minTime!,
      maxTime: maxTime!,
    };
  } catch (err) {
    await conn.run(`DROP TABLE IF EXISTS ${ident(table)}`);
    throw err;
  }
}

/** The epoch unit of a numeric time column, judged on its first 1000 values (see epochUnitOf). */
async function sampleUnit(conn: DuckDBConnection, from: string, col: string): Promise<TimeFormat> {
  const row = (await conn.runAndReadAll(`SELECT max(abs(${col}::DOUBLE)) FROM (SELECT ${col} FROM ${from} LIMIT 1000)`)).getRows()[0];
  return epochUnitOf(Number(row?.[0] ?? 0));
}

/** The error for a time value that is missing, unreadable or out of range. */
async function badTime(source: StageSource, column: string, row: number, unit: TimeFormat | null) {
  const raw = await source.rawTime(row);
  if (raw === null || raw.trim() === '') return invalid(`${source.where(row)}: the time column '${column}' is empty`);
  const expected = unit
    ? `an epoch number in ${unit.slice(6)}`
    : 'an RFC 3339 / ISO 8601 timestamp (for epoch numbers set time_format: epoch_s, epoch_ms, epoch_us or epoch_ns)';
  const limit = ` between ${new Date(-MAX_TIME_MICROS / 1000).toISOString().slice(0, 10)} and ${new Date(MAX_TIME_MICROS / 1000).toISOString().slice(0, 10)}`;
  return invalid(`${source.where(row)}: cannot read time value '${raw.slice(0, 80)}' in column '${column}': expected ${expected}${limit}`);
}

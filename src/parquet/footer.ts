/** Reads what the file manifest needs from an existing Parquet file (manifest rebuild at start). */
import type { DuckDBConnection } from '../duckdb/index.ts';

/** Rows, time range (epoch µs), column names and tag names of one data file. */
export interface ParquetSummary {
  rows: number;
  minTime: number;
  maxTime: number;
  columns: string[];
  tags: string[];
}

const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Summarizes the data file at local `path`; throws when it is not a readable Parquet file with a `time` column. */
export async function readParquetSummary(conn: DuckDBConnection, path: string): Promise<ParquetSummary> {
  const src = `read_parquet(${sqlString(path)})`;
  const stats = (await conn.runAndReadAll(`SELECT count(*)::DOUBLE, epoch_us(min(time))::DOUBLE, epoch_us(max(time))::DOUBLE FROM ${src}`)).getRows()[0]!;
  const columns = (await conn.runAndReadAll(`SELECT column_name FROM (DESCRIBE SELECT * FROM ${src})`)).getRows().map((r) => String(r[0]));
  const kv = (await conn.runAndReadAll(`SELECT decode(value) FROM parquet_kv_metadata(${sqlString(path)}) WHERE decode(key) = 'tags'`)).getRows();
  let tags: string[] = [];
  try {
    const parsed: unknown = kv[0] ? JSON.parse(String(kv[0][0])) : [];
    if (Array.isArray(parsed)) tags = parsed.filter((t): t is string => typeof t === 'string');
  } catch {
    // A file without readable tag metadata still holds valid rows; its tags are just unknown.
  }
  return { rows: Number(stats[0]), minTime: Number(stats[1] ?? 0), maxTime: Number(stats[2] ?? 0), columns, tags };
}

/**
 * ColumnBatches -> time-sorted Parquet files, one per UTC hour. The common flush (one hour, rows in
 * time order, numbers and tag-like strings) goes through the direct writer (direct-writer.ts);
 * everything else through DuckDB's COPY from the batch scan (batch-scan.ts), which was measured
 * faster than hyparquet-writer's general path (see bench/parquet-writers.bench.ts).
 */
import type { DuckDBConnection } from '../duckdb/index.ts';
import { MICROS_PER_HOUR, type ColumnBatch } from '../ingest/index.ts';
import { hourLayout, type HourPart } from './hour-layout.ts';
import { ORDINAL_COLUMN, withBatchScan } from './batch-scan.ts';
import { planColumns } from './chunk-fill.ts';
import { directWritable, writeDirect } from './direct-writer.ts';
import { quoteIdent, type LoadedTable } from './table-loader.ts';

/** Parquet compression codecs (`ingest.compression`). */
export type ParquetCompression = 'snappy' | 'zstd' | 'gzip' | 'none';

/** One written file: the hour it holds, where it is, rows and time range, and its columns. */
export interface WrittenFile extends HourPart {
  path: string;
  columns: string[];
  /** Set when the writer already fsynced the file (a flush worker that settles its files). */
  synced?: boolean;
}

/** How to write: codec, where each hour's file goes, and a table name unique to the caller. */
export interface WriteFilesOptions {
  compression: ParquetCompression;
  /** Local path for the file of hour `hour` (epoch µs). */
  pathFor(hour: number): string;
  /** Scratch table name (each concurrent writer needs its own). */
  table: string;
  /** `duckdb`: always DuckDB's COPY (benchmarks and tests compare the two writers); default: the direct writer where it applies. */
  engine?: 'auto' | 'duckdb';
}

const DICTIONARY_BYTES = 4096;
const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * Writes `batches` (one measurement) as one time-sorted Parquet file per UTC hour: by the direct
 * writer when it applies, else by DuckDB. There, one hour streams the rows from the JS arrays straight
 * into the COPY; rows spanning hours are first put into a scratch table (by DuckDB, from the same
 * stream) and then copied an hour at a time.
 */
export async function writeHourFiles(conn: DuckDBConnection, batches: readonly ColumnBatch[], opts: WriteFilesOptions): Promise<WrittenFile[]> {
  const { parts, sorted } = hourLayout(batches);
  if (parts.length === 0) return [];
  const total = parts.reduce((n, p) => n + p.rows, 0);
  const plans = planColumns(batches, total, 'enum');
  const columns = ['time', ...plans.map((p) => p.name)];
  const tags = plans.filter((p) => p.tag).map((p) => p.name);
  const codec = opts.compression === 'snappy' || opts.compression === 'none' ? opts.compression : null;
  if (codec && opts.engine !== 'duckdb' && directWritable(plans)) {
    const files = parts.map((part) => ({ ...part, path: opts.pathFor(part.hour), columns }));
    if (await writeDirect(batches, plans, total, files, codec, tags)) return files;
  }
  if (parts.length === 1) {
    const part = parts[0]!;
    const path = opts.pathFor(part.hour);
    // Stable sort: equal times keep arrival order, which the scan's row number records.
    await withBatchScan(conn, batches, plans, !sorted, (scan) =>
      copyToParquet(conn, `SELECT ${columns.map(quoteIdent).join(', ')} FROM ${scan}${sorted ? '' : ` ORDER BY time, ${ORDINAL_COLUMN}`}`, path, tags, opts.compression),
    );
    return [{ ...part, path, columns }];
  }
  await withBatchScan(conn, batches, plans, false, (scan) => conn.run(`CREATE OR REPLACE TEMP TABLE ${quoteIdent(opts.table)} AS SELECT * FROM ${scan}`));
  const loaded: LoadedTable = { table: opts.table, rows: total, columns: [{ name: 'time', type: 'float64', tag: false, sqlType: 'TIMESTAMP' }, ...plans] };
  try {
    const out: WrittenFile[] = [];
    for (const part of parts) {
      const path = opts.pathFor(part.hour);
      await copyTableToParquet(conn, loaded, path, { compression: opts.compression, sorted, range: { from: part.hour, to: part.hour + MICROS_PER_HOUR } });
      out.push({ ...part, path, columns });
    }
    return out;
  } finally {
    await conn.run(`DROP TABLE IF EXISTS ${quoteIdent(opts.table)}`);
  }
}

/**
 * COPYs a loaded table (optionally only times in [range.from, range.to) µs) to a Parquet file at
 * `path`, ordered by time (stable: equal times keep arrival order) unless `sorted` says it already is.
 * Tag column names go into the key/value metadata `tags`.
 */
export async function copyTableToParquet(
  conn: DuckDBConnection,
  loaded: LoadedTable,
  path: string,
  opts: { compression: ParquetCompression; sorted: boolean; range: { from: number; to: number } | null },
): Promise<void> {
  // ENUM columns are written as they are: DuckDB stores them as plain UTF8 strings (read back as
  // VARCHAR), reusing the dictionary it already has, which is faster than casting to VARCHAR first.
  const select = loaded.columns.map((c) => quoteIdent(c.name)).join(', ');
  const where = opts.range ? ` WHERE time >= make_timestamp(${opts.range.from}::BIGINT) AND time < make_timestamp(${opts.range.to}::BIGINT)` : '';
  const order = opts.sorted ? '' : ' ORDER BY time, rowid';
  const tags = loaded.columns.filter((c) => c.tag).map((c) => c.name);
  await copyToParquet(conn, `SELECT ${select} FROM ${quoteIdent(loaded.table)}${where}${order}`, path, tags, opts.compression);
}

/** COPYs the rows of `query` to a Parquet file at `path`, with the tag column names as key/value metadata `tags`. */
async function copyToParquet(conn: DuckDBConnection, query: string, path: string, tags: string[], compression: ParquetCompression): Promise<void> {
  const codec = compression === 'none' ? 'uncompressed' : compression;
  // DICTIONARY_SIZE_LIMIT (bytes) bounds how long the writer tries dictionary-encoding a numeric column
  // before falling back to plain: measured 5.2M -> 7.6M rows/s on the benchmark shape with files of the
  // same size, since measurements (random-looking floats) rarely repeat while status-like numbers (up to
  // ~500 distinct values) still get a dictionary. String and ENUM dictionaries are not affected.
  await conn.run(
    `COPY (${query}) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION ${codec}, DICTIONARY_SIZE_LIMIT ${DICTIONARY_BYTES}, ` +
      `KV_METADATA {tags: ${sqlString(JSON.stringify(tags))}})`,
  );
}

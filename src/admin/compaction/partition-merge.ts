/** Runs one merge on a DuckDB connection: finds the tag columns, checks the inputs, writes the output. */
import type { DuckDBConnection } from '../../duckdb/index.ts';
import { readParquetSummary, type ParquetSummary } from '../../parquet/index.ts';
import { RESERVED_COLUMNS, mergeStatement, sqlString, type MergeInput } from './merge-sql.ts';

/** The outcome: the output's summary, or why the inputs were left as they are. */
export type MergeResult = { written: ParquetSummary } | { skipped: string };

/**
 * Tag columns of the inputs: the union of each file's `tags` key/value metadata. A file without that
 * metadata (written elsewhere) makes every string column a tag, so distinct series are never collapsed.
 */
async function tagColumns(conn: DuckDBConnection, inputs: readonly MergeInput[], types: Map<string, string>): Promise<string[]> {
  const list = inputs.map((i) => sqlString(i.path)).join(', ');
  const rows = (await conn.runAndReadAll(`SELECT file_name, decode(value) FROM parquet_kv_metadata([${list}]) WHERE decode(key) = 'tags'`)).getRows();
  const tags = new Set<string>();
  const described = new Set<string>();
  for (const [file, value] of rows) {
    try {
      const parsed: unknown = JSON.parse(String(value));
      if (!Array.isArray(parsed)) continue;
      for (const t of parsed) if (typeof t === 'string' && types.has(t)) tags.add(t);
      described.add(String(file));
    } catch {
      // unreadable metadata: treated like a file without it
    }
  }
  if (inputs.some((i) => !described.has(i.path)))
    for (const [name, type] of types) if (type === 'VARCHAR' && name !== 'time') tags.add(name);
  return [...tags].sort();
}

/** Merges `inputs` into the Parquet file `output` (see merge-sql.ts), or says why it must not. */
export async function mergeFiles(conn: DuckDBConnection, inputs: readonly MergeInput[], output: string): Promise<MergeResult> {
  // Columns per file: a partition where some file lacks `time` is left untouched.
  for (const i of inputs) {
    const cols = (await conn.runAndReadAll(`SELECT name FROM parquet_schema(${sqlString(i.path)})`)).getRows().map((r) => String(r[0]));
    if (!cols.includes('time')) return { skipped: `file ${i.path} has no time column` };
  }
  const described = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet([${inputs.map((i) => sqlString(i.path)).join(', ')}], union_by_name = true)`)).getRows();
  const types = new Map(described.map((r) => [String(r[0]), String(r[1])] as const));
  const clash = RESERVED_COLUMNS.find((c) => types.has(c));
  if (clash) return { skipped: `a column is named '${clash}', which the merge uses itself` };
  const tags = await tagColumns(conn, inputs, types);
  await conn.run(mergeStatement(inputs, tags, output));
  return { written: await readParquetSummary(conn, output) };
}

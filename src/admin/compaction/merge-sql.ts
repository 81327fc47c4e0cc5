/**
 * The DuckDB statement of a merge (pure): read the input files by column name, give every row its
 * file's flush sequence and its position in that file, keep for each (tags, time) the row written
 * last — largest seq, then largest position — and write the survivors sorted by time as ZSTD Parquet.
 */
import { quoteIdent } from '../../parquet/index.ts';

/** Helper columns the merge adds; an input with a column of one of these names cannot be merged. */
export const RESERVED_COLUMNS = ['__svc_file', '__svc_seq', 'file_row_number'] as const;

/** Rows per Parquet row group of a merged file: DuckDB's default, big enough for scans, small enough for pruning. */
export const ROW_GROUP_SIZE = 122_880;

/** One input: local path DuckDB reads, and its flush sequence. */
export interface MergeInput {
  path: string;
  seq: number;
}

/** Quotes a SQL string literal. */
export const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** `read_parquet([...])` over the inputs, by column name, with file name and row position columns. */
export function readInputs(inputs: readonly MergeInput[]): string {
  const list = inputs.map((i) => sqlString(i.path)).join(', ');
  return `read_parquet([${list}], union_by_name = true, filename = '__svc_file', file_row_number = true)`;
}

/** The COPY statement writing the deduplicated, time-sorted merge of `inputs` to `output`. */
export function mergeStatement(inputs: readonly MergeInput[], tags: readonly string[], output: string): string {
  const seqs = inputs.map((i) => `(${sqlString(i.path)}, ${Math.trunc(i.seq)})`).join(', ');
  const key = [...tags.map(quoteIdent), 'time'].join(', ');
  const select =
    `SELECT * EXCLUDE (__svc_file, __svc_seq, file_row_number) FROM ${readInputs(inputs)} ` +
    `JOIN (VALUES ${seqs}) AS s(__svc_file, __svc_seq) USING (__svc_file) ` +
    `QUALIFY row_number() OVER (PARTITION BY ${key} ORDER BY __svc_seq DESC, file_row_number DESC) = 1 ` +
    `ORDER BY time`;
  return (
    `COPY (${select}) TO ${sqlString(output)} ` +
    `(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP_SIZE}, KV_METADATA {tags: ${sqlString(JSON.stringify(tags))}})`
  );
}

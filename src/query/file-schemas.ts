/**
 * Whether a set of Parquet files share one flat schema (the same columns in the same order with the
 * same physical and logical types), so DuckDB may read them without `union_by_name`: that option makes it open and
 * unify every file's schema at bind time, which costs about half a millisecond per query over two
 * dozen files. Files are immutable (a rewrite gets a new name), so each file's schema is read once
 * (`parquet_schema`, over the footers DuckDB caches anyway) and remembered by path.
 */
import type { DuckDBConnection } from '../duckdb/index.ts';
import { literal } from './sql/rewrite.ts';
import { setBounded } from '../lib/bounded-map.ts';

const MAX_FILES = 100_000;
/** Path -> schema signature; null: not flat (nested columns), always read by name. */
const signatures = new Map<string, string | null>();

/** True when every file in `paths` is known to have the same flat schema; false when unsure. */
export async function sameFlatSchema(conn: DuckDBConnection, paths: readonly string[]): Promise<boolean> {
  const missing = [...new Set(paths.filter((p) => !signatures.has(p)))];
  if (missing.length > 0 && !(await learn(conn, missing))) return false;
  const first = signatures.get(paths[0]!);
  return first != null && paths.every((p) => signatures.get(p) === first);
}

/** Reads and remembers the signatures of `paths`; false when DuckDB could not read them (the query itself will say why). */
async function learn(conn: DuckDBConnection, paths: readonly string[]): Promise<boolean> {
  let rows: unknown[][];
  try {
    const sql = `SELECT file_name, name, type, converted_type, logical_type, repetition_type, num_children, scale, precision FROM parquet_schema([${paths.map(literal).join(', ')}])`;
    rows = (await conn.runAndReadAll(sql)).getRows();
  } catch {
    return false;
  }
  const columns = new Map<string, string[]>(paths.map((p) => [p, []]));
  const groups = new Map<string, number>();
  for (const [file, ...rest] of rows) {
    const f = String(file);
    // The root element has children; any further group is a nested column.
    if (rest[5] !== null) groups.set(f, (groups.get(f) ?? 0) + 1);
    else columns.get(f)?.push(rest.map((v) => (v === null ? '\u0000' : String(v))).join('\t'));
  }
  for (const p of paths) {
    // In file order: `SELECT *` must list the columns in the same order either way.
    setBounded(signatures, p, (groups.get(p) ?? 0) === 1 ? columns.get(p)!.join('\n') : null, MAX_FILES);
  }
  return true;
}

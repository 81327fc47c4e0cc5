/**
 * SHOW statements answered as ordinary result sets: the listing is turned into a VALUES query, so
 * SHOW comes back through the same encoders (JSON, MessagePack) with the same shapes and types.
 *   SHOW DATABASES            -> name
 *   SHOW MEASUREMENTS|TABLES  -> database, name (FROM <db> or x-svc-database narrows it)
 *   SHOW COLUMNS / DESCRIBE   -> column_name, column_type (DuckDB type names)
 * Listings hold only what `access` may read; DESCRIBE reads its table like any query (checked there).
 */
import { invalid } from '../lib/errors.ts';
import { readableDatabases, readableMeasurements, type TableAccess } from '../lib/table-access.ts';
import type { ResultColumn } from './encode/result.ts';
import { ident, literal } from './sql/rewrite.ts';
import type { ShowCommand } from './sql/show.ts';
import type { TableSource } from './table-source.ts';

/** A VALUES query over `rows`, or an empty relation with those column names. */
function valuesSql(columns: readonly string[], rows: readonly string[][]): string {
  const names = columns.map(ident).join(', ');
  if (rows.length === 0) return `SELECT ${columns.map((c) => `CAST(NULL AS VARCHAR) AS ${ident(c)}`).join(', ')} WHERE false`;
  return `SELECT * FROM (VALUES ${rows.map((r) => `(${r.map(literal).join(', ')})`).join(', ')}) AS t(${names})`;
}

/** The SQL that answers `cmd`; `describe` returns the columns of a `SELECT * FROM <table>` query. */
export async function showSql(
  cmd: ShowCommand,
  defaultDatabase: string | undefined,
  source: TableSource,
  access: TableAccess,
  describe: (sql: string) => Promise<ResultColumn[]>,
): Promise<string> {
  switch (cmd.kind) {
    case 'databases':
      return valuesSql(['name'], readableDatabases(source.databases(), access).map((d) => [d]));
    case 'measurements': {
      const db = cmd.database ?? defaultDatabase;
      const readable = readableMeasurements(source.measurements(db), access);
      return valuesSql(['database', 'name'], readable.map((m) => [m.database, m.measurement]));
    }
    case 'columns': {
      const db = cmd.database ?? defaultDatabase;
      if (!db) throw invalid(`cannot describe '${cmd.measurement}': write <database>.${cmd.measurement} or send the x-svc-database header`);
      const columns = await describe(`SELECT * FROM ${ident(db)}.${ident(cmd.measurement)} LIMIT 0`);
      return valuesSql(['column_name', 'column_type'], columns.map((c) => [c.name, c.type]));
    }
  }
}

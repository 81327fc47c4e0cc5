/**
 * Source columns (as DuckDB describes a CSV or Parquet file) -> the service's four column types.
 * Integers become BIGINT, other numbers DOUBLE, booleans BOOLEAN, everything else text (dates,
 * nested values and the like are rendered by DuckDB's cast). Text columns are tags, as for
 * columnar MessagePack: compaction then never merges two rows that differ only in a text value.
 */
import { invalid } from '../../lib/errors.ts';
import { columnNameProblem } from '../../lib/names.ts';
import type { ColumnType } from '../column-batch.ts';

/** A column as the source file has it. */
export interface SourceColumn {
  name: string;
  duckType: string;
}

/** A column of a staged table: name, service type, tag flag, SQL type (the shape of parquet's LoadedTable columns). */
export interface StagedColumn {
  name: string;
  type: ColumnType;
  tag: boolean;
  sqlType: string;
}

/** A non-time column with the SQL expression that produces it from the source. */
export interface PlannedColumn extends StagedColumn {
  expr: string;
}

/** Quotes a SQL identifier. */
export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
/** Quotes a SQL string literal. */
export const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

const INTEGER = /^(TINYINT|SMALLINT|INTEGER|BIGINT|UTINYINT|USMALLINT|UINTEGER)$/;
// Wider integers may not fit BIGINT: DOUBLE keeps their magnitude instead of failing the import.
const FLOAT = /^(FLOAT|DOUBLE|REAL|DECIMAL(\(.*\))?|UBIGINT|HUGEINT|UHUGEINT)$/;

/** The service type and conversion of one source column. */
export function planColumn(col: SourceColumn): PlannedColumn {
  const id = ident(col.name);
  if (col.duckType === 'BOOLEAN') return { name: col.name, type: 'bool', tag: false, sqlType: 'BOOLEAN', expr: id };
  if (col.duckType === 'BIGINT') return { name: col.name, type: 'int64', tag: false, sqlType: 'BIGINT', expr: id };
  if (INTEGER.test(col.duckType)) return { name: col.name, type: 'int64', tag: false, sqlType: 'BIGINT', expr: `${id}::BIGINT` };
  if (FLOAT.test(col.duckType)) return { name: col.name, type: 'float64', tag: false, sqlType: 'DOUBLE', expr: col.duckType === 'DOUBLE' ? id : `${id}::DOUBLE` };
  return { name: col.name, type: 'string', tag: true, sqlType: 'VARCHAR', expr: col.duckType === 'VARCHAR' ? id : `${id}::VARCHAR` };
}

/**
 * Splits the source columns into the time column (`timeColumn`, renamed `time`) and the planned rest.
 * AppError invalid when the time column is missing or a name is unusable; `hint` is added to the
 * missing-column message (the CSV reader suggests a delimiter there).
 */
export function planColumns(source: readonly SourceColumn[], timeColumn: string, hint = ''): { time: SourceColumn; columns: PlannedColumn[] } {
  const time = source.find((c) => c.name === timeColumn);
  if (!time) {
    const names = source.map((c) => `'${c.name}'`).slice(0, 20).join(', ');
    throw invalid(`unknown time column '${timeColumn}': the columns are ${names}${source.length > 20 ? ', ...' : ''}${hint}`);
  }
  const seen = new Map<string, string>([['time', timeColumn]]);
  const columns: PlannedColumn[] = [];
  for (const col of source) {
    if (col === time) continue;
    const problem = columnNameProblem(col.name);
    if (problem) throw invalid(problem);
    const key = col.name.toLowerCase();
    const clash = seen.get(key);
    if (clash !== undefined) {
      throw invalid(
        key === 'time'
          ? `column '${col.name}' clashes with the time column (which is stored as 'time'): rename it, or name it as the time column`
          : `columns '${clash}' and '${col.name}' differ only in letter case`,
      );
    }
    seen.set(key, col.name);
    columns.push(planColumn(col));
  }
  return { time, columns };
}

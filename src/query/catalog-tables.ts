/**
 * The Postgres catalog as svc's metadata: `information_schema` and `pg_catalog` relations that
 * clients list tables and columns with (psql, Grafana, DBeaver), answered as VALUES relations built
 * from the measurements svc holds. Each svc database is a schema; each measurement a table.
 */
import { invalid } from '../lib/errors.ts';
import type { ResultColumn } from './encode/result.ts';
import { ident, literal } from './sql/rewrite.ts';
import type { TableSource } from './table-source.ts';

/** Schemas whose tables are answered here. */
export const CATALOG_SCHEMAS = new Set(['information_schema', 'pg_catalog']);

type Cell = string | number | boolean | null;
interface Relation {
  columns: [string, 'VARCHAR' | 'INTEGER' | 'BOOLEAN'][];
  rows: Cell[][];
}

/** Most measurements described for a column listing (each costs a planning round). */
const MAX_DESCRIBED = 500;

/** Postgres' name and OID for a DuckDB type name (text for anything svc has no closer match for). */
export function pgTypeOf(duckType: string): { name: string; oid: number } {
  const t = duckType.toUpperCase();
  if (t === 'BOOLEAN') return { name: 'boolean', oid: 16 };
  if (t === 'BIGINT' || t === 'UINTEGER') return { name: 'bigint', oid: 20 };
  if (t === 'INTEGER' || t === 'USMALLINT') return { name: 'integer', oid: 23 };
  if (t === 'SMALLINT' || t === 'TINYINT' || t === 'UTINYINT') return { name: 'smallint', oid: 21 };
  if (t === 'DOUBLE') return { name: 'double precision', oid: 701 };
  if (t === 'FLOAT') return { name: 'real', oid: 700 };
  if (t.startsWith('TIMESTAMP')) return { name: 'timestamp with time zone', oid: 1184 };
  if (t === 'DATE') return { name: 'date', oid: 1082 };
  if (t.startsWith('DECIMAL') || t === 'HUGEINT' || t === 'UBIGINT') return { name: 'numeric', oid: 1700 };
  if (t === 'BLOB') return { name: 'bytea', oid: 17 };
  return { name: 'text', oid: 25 };
}

const TYPES: [number, string][] = [[16, 'bool'], [17, 'bytea'], [20, 'int8'], [21, 'int2'], [23, 'int4'], [25, 'text'], [700, 'float4'], [701, 'float8'], [1043, 'varchar'], [1082, 'date'], [1114, 'timestamp'], [1184, 'timestamptz'], [1700, 'numeric']];

/**
 * The SQL of catalog relation `schema.table`, built from svc's metadata; `describe` gives a
 * measurement's columns. Unknown catalog relations are refused with a message naming what exists.
 */
export async function catalogSql(
  schema: string,
  table: string,
  source: Pick<TableSource, 'databases' | 'measurements'>,
  user: string,
  describe: (database: string, measurement: string) => Promise<ResultColumn[]>,
): Promise<string> {
  const s = schema.toLowerCase();
  const t = table.toLowerCase();
  const dbs = source.databases();
  const ms = source.measurements();
  const oidOfDb = (d: string) => 16384 + dbs.indexOf(d);
  const oidOfTable = (i: number) => 100000 + i;
  const columns = async () => {
    if (ms.length > MAX_DESCRIBED) throw invalid(`cannot list columns of ${ms.length} measurements at once (at most ${MAX_DESCRIBED}): use SHOW COLUMNS FROM <db>.<m>`);
    const out: { i: number; database: string; measurement: string; cols: ResultColumn[] }[] = [];
    for (const [i, m] of ms.entries()) out.push({ i, ...m, cols: await describe(m.database, m.measurement) });
    return out;
  };
  let rel: Relation | null = null;
  if (s === 'information_schema') {
    if (t === 'schemata')
      rel = { columns: [['catalog_name', 'VARCHAR'], ['schema_name', 'VARCHAR'], ['schema_owner', 'VARCHAR']], rows: dbs.map((d) => [d, d, user]) };
    else if (t === 'tables')
      rel = {
        columns: [['table_catalog', 'VARCHAR'], ['table_schema', 'VARCHAR'], ['table_name', 'VARCHAR'], ['table_type', 'VARCHAR']],
        rows: ms.map((m) => [m.database, m.database, m.measurement, 'BASE TABLE']),
      };
    else if (t === 'columns')
      rel = {
        columns: [['table_catalog', 'VARCHAR'], ['table_schema', 'VARCHAR'], ['table_name', 'VARCHAR'], ['column_name', 'VARCHAR'], ['ordinal_position', 'INTEGER'], ['data_type', 'VARCHAR'], ['udt_name', 'VARCHAR'], ['is_nullable', 'VARCHAR']],
        rows: (await columns()).flatMap((m) => m.cols.map((c, k): Cell[] => [m.database, m.database, m.measurement, c.name, k + 1, pgTypeOf(c.type).name, TYPES.find(([o]) => o === pgTypeOf(c.type).oid)![1], c.name === 'time' ? 'NO' : 'YES'])),
      };
  } else if (s === 'pg_catalog') {
    if (t === 'pg_namespace') rel = { columns: [['oid', 'INTEGER'], ['nspname', 'VARCHAR'], ['nspowner', 'INTEGER']], rows: dbs.map((d) => [oidOfDb(d), d, 10]) };
    else if (t === 'pg_database') rel = { columns: [['oid', 'INTEGER'], ['datname', 'VARCHAR'], ['datallowconn', 'BOOLEAN']], rows: dbs.map((d) => [oidOfDb(d), d, true]) };
    else if (t === 'pg_tables')
      rel = { columns: [['schemaname', 'VARCHAR'], ['tablename', 'VARCHAR'], ['tableowner', 'VARCHAR']], rows: ms.map((m) => [m.database, m.measurement, user]) };
    else if (t === 'pg_class')
      rel = {
        columns: [['oid', 'INTEGER'], ['relname', 'VARCHAR'], ['relnamespace', 'INTEGER'], ['relkind', 'VARCHAR'], ['relowner', 'INTEGER'], ['relam', 'INTEGER']],
        rows: ms.map((m, i) => [oidOfTable(i), m.measurement, oidOfDb(m.database), 'r', 10, 2]),
      };
    else if (t === 'pg_attribute')
      rel = {
        columns: [['attrelid', 'INTEGER'], ['attname', 'VARCHAR'], ['atttypid', 'INTEGER'], ['attnum', 'INTEGER'], ['attnotnull', 'BOOLEAN'], ['attisdropped', 'BOOLEAN']],
        rows: (await columns()).flatMap((m) => m.cols.map((c, k): Cell[] => [oidOfTable(m.i), c.name, pgTypeOf(c.type).oid, k + 1, c.name === 'time', false])),
      };
    else if (t === 'pg_type') rel = { columns: [['oid', 'INTEGER'], ['typname', 'VARCHAR'], ['typnamespace', 'INTEGER']], rows: TYPES.map(([o, n]) => [o, n, 11]) };
    else if (t === 'pg_am') rel = { columns: [['oid', 'INTEGER'], ['amname', 'VARCHAR']], rows: [[2, 'heap']] };
    else if (t === 'pg_extension') rel = { columns: [['oid', 'INTEGER'], ['extname', 'VARCHAR'], ['extversion', 'VARCHAR']], rows: [] };
  }
  if (!rel)
    throw invalid(
      `${schema}.${table} is not available: svc answers information_schema.schemata, tables, columns and pg_catalog.pg_namespace, pg_database, pg_tables, pg_class, pg_attribute, pg_type, pg_am, pg_extension`,
    );
  return valuesSql(rel);
}

function valuesSql(rel: Relation): string {
  const names = rel.columns.map(([n]) => ident(n)).join(', ');
  const cell = (v: Cell, type: string) => (v === null ? `CAST(NULL AS ${type})` : typeof v === 'string' ? literal(v) : typeof v === 'boolean' ? String(v) : `CAST(${v} AS ${type})`);
  if (rel.rows.length === 0) return `SELECT ${rel.columns.map(([n, type]) => `CAST(NULL AS ${type}) AS ${ident(n)}`).join(', ')} WHERE false`;
  return `SELECT * FROM (VALUES ${rel.rows.map((r) => `(${r.map((v, i) => cell(v, rel.columns[i]![1])).join(', ')})`).join(', ')}) AS t(${names})`;
}

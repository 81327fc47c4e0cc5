/**
 * Loads ColumnBatches into a DuckDB table through an appender, filling whole data chunks by copying
 * typed arrays: the flush path writes Parquet from this table, and the query engine loads buffered
 * rows with it (read-your-writes). Batches may differ in schema: see schema.ts for the union rules.
 */
import { DuckDBDataChunk, ENUM, type DuckDBConnection, type DuckDBType, BIGINT, BOOLEAN, DOUBLE, TIMESTAMP, VARCHAR } from '../duckdb/index.ts';
import type { ColumnBatch } from '../ingest/index.ts';
import { unionSchema, type SchemaColumn } from './schema.ts';
import { encodeStrings, stringAt, type EncodedStrings } from './string-dictionary.ts';
import { openVector, writeMicrosAsInt64, type OpenVector } from './vector-access.ts';

/** DuckDB's vector size: a chunk holds at most this many rows. */
const CHUNK_ROWS = 2048;

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

type Plan = SchemaColumn & { sqlType: string; chunkType: DuckDBType; encoded: EncodedStrings | null };

/** Quotes a SQL identifier. */
export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;
const quoteLiteral = (s: string) => `'${s.replace(/'/g, "''")}'`;

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
    const valid = new Uint8Array(CHUNK_ROWS);
    // One chunk, refilled for every 2048 rows: creating chunks and opening vectors costs more than filling them.
    const chunk = DuckDBDataChunk.create(types, Math.min(CHUNK_ROWS, Math.max(total, 1)));
    const vectors = types.map((_, k) => openVector(chunk, k));
    let bi = 0; // batch holding global row `g`
    let bStart = 0; // global row of that batch's first row
    for (let g = 0; g < total; g += CHUNK_ROWS) {
      const n = Math.min(CHUNK_ROWS, total - g);
      while (bStart + batches[bi]!.length <= g) bStart += batches[bi++]!.length;
      chunk.rowCount = n;
      const segments = (fn: (b: ColumnBatch, from: number, to: number, at: number) => void) => {
        for (let i = bi, s = bStart, at = 0; at < n; s += batches[i]!.length, i++) {
          const b = batches[i]!;
          const from = g + at - s;
          const to = Math.min(b.length, from + (n - at));
          if (to > from) fn(b, from, to, at);
          at += Math.max(0, to - from);
        }
      };
      const tv = vectors[0]!;
      segments((b, from, to, at) => writeMicrosAsInt64(tv.bytes, at, b.time, from, to));
      tv.flush();
      for (let k = 0; k < plans.length; k++) fillColumn(vectors[k + 1]!, plans[k]!, g, n, segments, valid);
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  return { table, rows: total, columns: [{ name: 'time', type: 'float64', tag: false, sqlType: 'TIMESTAMP' }, ...plans] };
}

function planColumns(batches: readonly ColumnBatch[], total: number, strings: 'enum' | 'varchar'): Plan[] {
  const seen = new Set<string>();
  return unionSchema(batches).map((c): Plan => {
    const lower = c.name.toLowerCase();
    if (lower === 'time') throw new Error(`cannot load rows: a column may not be named '${c.name}' (the timestamp column is 'time')`);
    if (seen.has(lower)) throw new Error(`cannot load rows: columns differing only in case ('${c.name}') are not supported`);
    seen.add(lower);
    if (c.type === 'float64') return { ...c, sqlType: 'DOUBLE', chunkType: DOUBLE, encoded: null };
    if (c.type === 'int64') return { ...c, sqlType: 'BIGINT', chunkType: BIGINT, encoded: null };
    if (c.type === 'bool') return { ...c, sqlType: 'BOOLEAN', chunkType: BOOLEAN, encoded: null };
    const encoded = encodeStrings(batches, c.name, total);
    if (!encoded) return { ...c, sqlType: 'VARCHAR', chunkType: VARCHAR, encoded: null };
    const sqlType = strings === 'enum' && encoded.dictionary.length > 0 ? `ENUM(${encoded.dictionary.map(quoteLiteral).join(', ')})` : 'VARCHAR';
    // An empty ENUM is not a type; a column of only NULLs goes in as VARCHAR.
    const chunkType = encoded.dictionary.length > 0 ? ENUM(encoded.dictionary) : VARCHAR;
    return { ...c, sqlType, chunkType, encoded: encoded.dictionary.length > 0 ? encoded : null };
  });
}

type Segments = (fn: (b: ColumnBatch, from: number, to: number, at: number) => void) => void;

/** Writes rows [g, g+n) of one planned column into a chunk vector. */
function fillColumn(v: OpenVector, p: Plan, g: number, n: number, segments: Segments, valid: Uint8Array): void {
  if (p.encoded) {
    const { ids, valid: ev, dictionary } = p.encoded;
    const target = dictionary.length < 256 ? v.bytes : dictionary.length < 65536 ? new Uint16Array(v.bytes.buffer, v.bytes.byteOffset, n) : new Uint32Array(v.bytes.buffer, v.bytes.byteOffset, n);
    target.set(ids.subarray(g, g + n));
    v.setValidity(ev && ev.subarray(g, g + n).includes(0) ? ev.subarray(g, g + n) : null, n);
    v.flush();
    return;
  }
  if (p.type === 'string') {
    segments((b, from, to, at) => {
      const col = b.columns.get(p.name);
      for (let i = from; i < to; i++) v.setItem(at + i - from, stringAt(col, i));
    });
    v.flush();
    return;
  }
  let anyNull = false;
  const f64 = p.type === 'float64' ? new Float64Array(v.bytes.buffer, v.bytes.byteOffset, n) : null;
  const i64 = p.type === 'int64' ? new BigInt64Array(v.bytes.buffer, v.bytes.byteOffset, n) : null;
  segments((b, from, to, at) => {
    const col = b.columns.get(p.name);
    if (!col || col.type === 'string') {
      valid.fill(0, at, at + to - from);
      anyNull = true;
      return;
    }
    if (col.valid) {
      const src = col.valid.subarray(from, to);
      valid.set(src, at);
      anyNull ||= src.includes(0);
    } else valid.fill(1, at, at + to - from);
    if (f64) {
      if (col.type === 'float64') f64.set(col.values.subarray(from, to), at);
      else if (col.type === 'int64') for (let i = from; i < to; i++) f64[at + i - from] = Number(col.values[i]);
    } else if (i64 && col.type === 'int64') i64.set(col.values.subarray(from, to), at);
    else if (p.type === 'bool' && col.type === 'bool') v.bytes.set(col.values.subarray(from, to), at);
  });
  v.setValidity(anyNull ? valid : null, n);
  v.flush();
}

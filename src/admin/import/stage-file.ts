/**
 * A spooled upload -> staged tables, one per measurement. CSV and Parquet are read by DuckDB itself;
 * line protocol and TLE are parsed in JS, a few MB at a time, and their columns appended to a table.
 * Any bad row or line fails the whole import here, before anything is stored.
 */
import type { WriteService } from '../../buffer/index.ts';
import type { DuckDBConnection } from '../../duckdb/index.ts';
import { lineChunks, parseLineProtocol, stageCsv, stageParquet, TleParser, type ColumnBatch, type Precision } from '../../ingest/index.ts';
import { AppError, invalid } from '../../lib/errors.ts';
import { loadBatchesIntoTable } from '../../parquet/index.ts';
import type { StagedMeasurement } from './import-commit.ts';
import type { ImportRequest } from './import-service.ts';

const FORMAT_NAMES = { csv: 'CSV', parquet: 'Parquet', lp: 'line protocol', tle: 'TLE' } as const;

/**
 * Stages the file at `path` as `req.format`; every table it creates is named `<prefix>_...` and pushed
 * onto `tables` (the caller drops them). AppError invalid messages read "cannot import <format>: ...".
 */
export async function stageFile(conn: DuckDBConnection, req: ImportRequest, path: string, prefix: string, writes: WriteService, tables: string[]): Promise<StagedMeasurement[]> {
  try {
    switch (req.format) {
      case 'csv':
        tables.push(`${prefix}_csv`);
        return [{ measurement: req.measurement, table: await stageCsv(conn, path, `${prefix}_csv`, req.csv) }];
      case 'parquet':
        tables.push(`${prefix}_parquet`);
        return [{ measurement: req.measurement, table: await stageParquet(conn, path, `${prefix}_parquet`, req.parquet) }];
      case 'lp':
        return await loadAll(conn, await parseLineProtocolFile(path, req.precision), prefix, writes, tables);
      case 'tle':
        return await loadAll(conn, [await parseTleFile(path, req.measurement)], prefix, writes, tables);
    }
  } catch (err) {
    // DuckDB names the spooled file in its messages; the client sees "the upload", never a server path.
    if (err instanceof AppError && err.kind === 'invalid')
      throw invalid(`cannot import ${FORMAT_NAMES[req.format]}: ${err.message.split(path).join('the upload')}`, err.extra);
    throw err;
  }
}

/** Every point of a line-protocol file; the first bad line fails the import (the count of bad lines is reported). */
async function parseLineProtocolFile(path: string, precision: Precision): Promise<ColumnBatch[]> {
  const now = Date.now() * 1000;
  const batches: ColumnBatch[] = [];
  let rejected = 0;
  let first: { line: number; message: string } | null = null;
  let empty = true;
  for await (const chunk of lineChunks(path)) {
    empty &&= chunk.bytes.every((b) => b === 10 || b === 13 || b === 32 || b === 9);
    const r = parseLineProtocol(chunk.bytes, { precision, now });
    if (r.rejected > 0) {
      rejected += r.rejected;
      const e = r.errors[0]!;
      first ??= { line: chunk.firstLine + e.line - 1, message: e.message };
    }
    // After a bad line nothing will be imported: only the bad lines are still counted.
    if (rejected === 0) batches.push(...r.batches);
  }
  if (empty) throw invalid('the file is empty');
  if (first) throw invalid(`${rejected} bad line${rejected === 1 ? '' : 's'}, nothing imported; first bad line ${first.line}: ${first.message}`, { line: first.line, rejected });
  if (batches.every((b) => b.length === 0)) throw invalid('the file has no points (only comments)');
  return batches;
}

/** Every element set of a TLE file; any bad set fails the import and all bad sets (up to 100) are listed. */
async function parseTleFile(path: string, measurement: string): Promise<ColumnBatch> {
  const parser = new TleParser(measurement);
  const decoder = new TextDecoder();
  for await (const chunk of lineChunks(path)) parser.push(decoder.decode(chunk.bytes, { stream: true }));
  const r = parser.finish();
  if (r.rejected > 0) {
    const e = r.errors[0]!;
    throw invalid(`${r.rejected} bad element set${r.rejected === 1 ? '' : 's'}, nothing imported; first at line ${e.line}: ${e.message}`, { rejected: r.rejected, errors: r.errors });
  }
  if (r.batch.length === 0) throw invalid('the file is empty (no element sets)');
  return r.batch;
}

/** Validates names like every write, then loads each measurement's batches into its own table. */
async function loadAll(conn: DuckDBConnection, batches: ColumnBatch[], prefix: string, writes: WriteService, tables: string[]): Promise<StagedMeasurement[]> {
  writes.validate(batches);
  const byMeasurement = new Map<string, ColumnBatch[]>();
  for (const b of batches) if (b.length > 0) byMeasurement.set(b.measurement, [...(byMeasurement.get(b.measurement) ?? []), b]);
  const out: StagedMeasurement[] = [];
  for (const [measurement, list] of byMeasurement) {
    const table = `${prefix}_${out.length}`;
    tables.push(table);
    out.push({ measurement, table: await loadBatchesIntoTable(conn, table, list, { strings: 'enum', temp: false }) });
  }
  return out;
}

/**
 * A Parquet upload -> staged table, read by DuckDB's read_parquet. The file must carry the Parquet
 * magic bytes at both ends; its time column may be a timestamp (any unit, with or without zone), a
 * date, epoch numbers (unit from `time_format` or auto-detected) or RFC 3339 text.
 */
import { open } from 'node:fs/promises';
import type { DuckDBConnection } from '../../duckdb/index.ts';
import { AppError, invalid, messageOf } from '../../lib/errors.ts';
import { ident, literal, type SourceColumn } from '../import-table/column-plan.ts';
import { stageTable, type StagedTable } from '../import-table/stage-table.ts';
import type { TimeFormat } from '../import-table/time-expression.ts';

/** Which column holds the time and, for epoch numbers, in what unit. */
export interface ParquetOptions {
  timeColumn: string;
  timeFormat: TimeFormat | null;
}

const MAGIC = 'PAR1';

/** Reads the Parquet file at `path` into table `table`. Throws AppError invalid on bad input. */
export async function stageParquet(conn: DuckDBConnection, path: string, table: string, opts: ParquetOptions): Promise<StagedTable> {
  await assertParquet(path);
  const from = `read_parquet(${literal(path)})`;
  let columns: SourceColumn[];
  try {
    columns = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${from}`)).getRows().map((r) => ({ name: String(r[0]), duckType: String(r[1]) }));
  } catch (err) {
    throw invalid(`cannot read the Parquet file: ${firstLine(messageOf(err))}`);
  }
  try {
    return await stageTable(conn, table, {
      from,
      columns,
      timeColumn: opts.timeColumn,
      timeFormat: opts.timeFormat,
      where: (row) => `row ${row + 1}`,
      rawTime: async (row) => {
        const r = await conn.runAndReadAll(`SELECT ${ident(opts.timeColumn)}::VARCHAR FROM ${from} LIMIT 1 OFFSET ${row}`);
        return (r.getRows()[0]?.[0] as string | null | undefined) ?? null;
      },
    });
  } catch (err) {
    if (err instanceof AppError) throw err;
    const message = messageOf(err);
    if (/^(Out of Memory|IO) Error/i.test(message)) throw err;
    throw invalid(`cannot read the Parquet data: ${firstLine(message)}`);
  }
}

/** AppError invalid unless the file starts and ends with `PAR1` (checked here for a message users understand). */
async function assertParquet(path: string): Promise<void> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    if (size === 0) throw invalid('the file is empty');
    const head = new Uint8Array(4);
    const tail = new Uint8Array(4);
    await file.read(head, 0, 4, 0);
    await file.read(tail, 0, 4, Math.max(0, size - 4));
    const text = (b: Uint8Array) => String.fromCharCode(...b);
    if (size < 12 || text(head) !== MAGIC || text(tail) !== MAGIC)
      throw invalid(`the body is not a Parquet file: it does not start and end with the magic bytes ${MAGIC} (send the file itself, as application/octet-stream)`);
  } finally {
    await file.close();
  }
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}

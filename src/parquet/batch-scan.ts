/**
 * ColumnBatches as a DuckDB table function, so a COPY (or CREATE TABLE AS) reads them straight from
 * the JS typed arrays. Compared with an appender this skips materializing a DuckDB table on the JS
 * thread (the appender's synchronous flush was the largest single cost of the write path): DuckDB
 * asks for one 2048-row chunk at a time on its own thread, and the JS side only copies arrays.
 */
import { BIGINT, type DuckDBConnection, DuckDBTableFunction, INTEGER, TIMESTAMP } from '../duckdb/index.ts';
import type { ColumnBatch } from '../ingest/index.ts';
import { CHUNK_ROWS, FillState, fillChunk, type Plan } from './chunk-fill.ts';

/** Column name of the row number a scan adds when asked for it (for stable sorts). */
export const ORDINAL_COLUMN = '__svc_row';

interface ScanSource {
  batches: readonly ColumnBatch[];
  plans: readonly Plan[];
  total: number;
  ordinal: boolean;
}

interface ScanState {
  pos: number;
  fill: FillState;
}

// Scans in progress, by the id passed to the table function as its argument.
const sources = new Map<number, ScanSource>();
let nextSource = 1;
const functionNames = new WeakMap<DuckDBConnection, string>();
let nextFunction = 1;

/** Registers the scan function on `conn` once; returns its name. */
function scanFunction(conn: DuckDBConnection): string {
  let name = functionNames.get(conn);
  if (name !== undefined) return name;
  // Functions land in the database's catalog; a name per connection keeps registrations from colliding.
  name = `svc_batch_scan_${nextFunction++}`;
  const fn = DuckDBTableFunction.create({
    name,
    parameterTypes: [INTEGER],
    bindFunction(info) {
      const src = sources.get(Number(info.getParameter(0)));
      if (!src) return info.setError('svc batch scan: unknown source');
      info.addResultColumn('time', TIMESTAMP);
      for (const p of src.plans) info.addResultColumn(p.name, p.chunkType);
      if (src.ordinal) info.addResultColumn(ORDINAL_COLUMN, BIGINT);
      info.setCardinality(src.total, true);
      info.setBindData(src);
    },
    initFunction(info) {
      // One reader: chunks must come out in row order, and the state is plain JS.
      info.setMaxThreads(1);
      info.setInitData({ pos: 0, fill: new FillState() } satisfies ScanState);
    },
    mainFunction(info, chunk) {
      const src = info.bindData as ScanSource;
      const st = info.initData as ScanState;
      const n = Math.min(CHUNK_ROWS, src.total - st.pos);
      if (n <= 0) {
        chunk.rowCount = 0;
        return;
      }
      try {
        // DuckDB resets the output chunk between calls (validity included): no mask carries over.
        st.fill.masked.length = 0;
        fillChunk(chunk, src.batches, src.plans, st.fill, st.pos, n, src.ordinal);
        st.pos += n;
      } catch (err) {
        info.setError(`svc batch scan: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  });
  conn.registerTableFunction(fn);
  functionNames.set(conn, name);
  return name;
}

/**
 * Runs `fn` with a SQL table expression that yields `batches` as rows: `time`, one column per plan
 * and, when `ordinal`, ORDINAL_COLUMN (0, 1, 2... in batch order). The batches must stay unchanged
 * until `fn` settles.
 */
export async function withBatchScan<T>(conn: DuckDBConnection, batches: readonly ColumnBatch[], plans: readonly Plan[], ordinal: boolean, fn: (from: string) => Promise<T>): Promise<T> {
  const name = scanFunction(conn);
  const id = nextSource;
  nextSource = (nextSource % 2_000_000_000) + 1; // stays an INTEGER
  sources.set(id, { batches, plans, total: batches.reduce((n, b) => n + b.length, 0), ordinal });
  try {
    return await fn(`${name}(${id})`);
  } finally {
    sources.delete(id);
  }
}

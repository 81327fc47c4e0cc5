/**
 * JSON query results, written as bytes straight from DuckDB's vectors: no row objects, no
 * JSON.stringify over the data. Row-major `data`; timestamps RFC 3339 UTC; NaN/Infinity -> null;
 * BIGINT, HUGEINT and scale-0 decimals as exact integer digits (a client parsing into doubles
 * rounds beyond 2^53, one that parses big numbers keeps every digit); other decimals as numbers;
 * nested and exotic types through DuckDB's own JSON conversion. Large results are split between
 * the main thread and the JSON workers (json-workers.ts), which write their rows in parallel.
 */
import { JsonDuckDBValueConverter, rawVector, stringBytes, type DuckDBDataChunk } from '../../duckdb/index.ts';
import { ByteSink } from './byte-sink.ts';
import { vectorWidth } from './column-kind.ts';
import { JsonRows, portableKind, type RowColumn } from './json-rows.ts';
import type { JsonJob } from './json-worker.ts';
import { encodeOnWorker, jsonWorkerCount } from './json-workers.ts';
import type { ResultColumn } from './result.ts';

/** Below this many rows the workers' hand-off costs more than it saves. */
const PARALLEL_MIN_ROWS = 100_000;

/** Collects result chunks; `finish` writes the whole body. */
export class JsonEncoder {
  private readonly chunks: DuckDBDataChunk[] = [];
  private rows = 0;

  constructor(private readonly columns: readonly ResultColumn[]) {}

  /** Number of rows added so far. */
  get rowCount(): number {
    return this.rows;
  }

  /** Adds a chunk (kept, not copied, until `finish`). */
  add(chunk: DuckDBDataChunk): void {
    if (chunk.rowCount === 0) return;
    this.chunks.push(chunk);
    this.rows += chunk.rowCount;
  }

  /** The complete response body as parts. */
  async finish(meta: { executionTimeMs: number }): Promise<Uint8Array[]> {
    const head = new ByteSink();
    head.utf8(`{"columns":${JSON.stringify(this.columns.map((c) => c.name))},"types":${JSON.stringify(this.columns.map((c) => c.type))},"data":[`);
    const body = await this.encodeRows();
    const tail = new ByteSink();
    const ms = Number.isFinite(meta.executionTimeMs) ? meta.executionTimeMs : 0;
    tail.ascii(`],"row_count":${this.rows},"execution_time_ms":${ms},"success":true}`);
    return [...head.parts(), ...body, ...tail.parts()];
  }

  private async encodeRows(): Promise<Uint8Array[]> {
    const workers = this.rows >= PARALLEL_MIN_ROWS && this.columns.every((c) => portableKind(c.kind)) ? jsonWorkerCount() : 0;
    if (workers === 0) return this.encodeHere(this.chunks, true);
    // Contiguous slices of about equal rows: the main thread takes the first, each worker one more.
    const slices = sliceChunks(this.chunks, workers + 1);
    const jobs = slices.slice(1).map((slice, k) => {
      const { job, transfer } = this.job(slice);
      return encodeOnWorker(k, job, transfer).catch(() => this.encodeHere(slice, false));
    });
    const mine = this.encodeHere(slices[0]!, true);
    return [...mine, ...(await Promise.all(jobs)).flat()];
  }

  /** Encodes `chunks` on this thread. */
  private encodeHere(chunks: readonly DuckDBDataChunk[], first: boolean): Uint8Array[] {
    const rows = new JsonRows(this.columns.map((c) => c.kind));
    const sink = new ByteSink();
    for (const chunk of chunks) {
      const cols = this.columns.map((c, ci): RowColumn => {
        const width = vectorWidth(c.kind);
        if (c.kind.k === 'text' || c.kind.k === 'blob') return { raw: width > 0 ? rawVector(chunk, ci, width) : null, cell: this.engineCell(chunk, ci, sink) };
        const raw = width > 0 ? rawVector(chunk, ci, width) : null;
        return { raw, long: raw ? (i) => stringBytes(raw.data, i) : undefined };
      });
      rows.write(sink, cols, chunk.rowCount, first);
      first = false;
    }
    return sink.parts();
  }

  /** A worker job for `chunks`: copies of their column memory, long strings resolved. */
  private job(chunks: readonly DuckDBDataChunk[]): { job: Omit<JsonJob, 'id'>; transfer: ArrayBuffer[] } {
    const transfer: ArrayBuffer[] = [];
    const own = (a: Uint8Array) => {
      const copy = a.slice();
      transfer.push(copy.buffer);
      return copy;
    };
    const out = chunks.map((chunk) => ({
      n: chunk.rowCount,
      cols: this.columns.map((c, ci) => {
        const width = vectorWidth(c.kind) || 1;
        const raw = rawVector(chunk, ci, width);
        let long: (Uint8Array | null)[] | null = null;
        if (c.kind.k === 'varchar') {
          long = new Array(raw.rows).fill(null);
          const w = new DataView(raw.data.buffer, raw.data.byteOffset, raw.data.byteLength);
          for (let i = 0; i < raw.rows; i++) if (w.getUint32(i * 16, true) > 12) long[i] = stringBytes(raw.data, i);
        }
        return { data: own(raw.data), validity: raw.validity ? own(raw.validity) : null, long };
      }),
    }));
    return { job: { kinds: this.columns.map((c) => c.kind), first: false, chunks: out }, transfer };
  }

  /** Cells DuckDB renders itself (nested and exotic types, blobs as base64). */
  private engineCell(chunk: DuckDBDataChunk, ci: number, sink: ByteSink): (i: number) => void {
    if (this.columns[ci]!.kind.k === 'blob') {
      const raw = rawVector(chunk, ci, 16);
      return (i) => sink.utf8(JSON.stringify(Buffer.from(stringBytes(raw.data, i)).toString('base64')));
    }
    const values = chunk.convertColumnValues(ci, JsonDuckDBValueConverter);
    return (i) => sink.utf8(JSON.stringify(values[i] ?? null));
  }
}

/** Splits chunks into `parts` contiguous runs of roughly equal row counts. */
function sliceChunks(chunks: readonly DuckDBDataChunk[], parts: number): DuckDBDataChunk[][] {
  const total = chunks.reduce((n, c) => n + c.rowCount, 0);
  const out: DuckDBDataChunk[][] = Array.from({ length: parts }, () => []);
  let seen = 0;
  for (const c of chunks) {
    out[Math.min(parts - 1, Math.floor((seen * parts) / total))]!.push(c);
    seen += c.rowCount;
  }
  return out;
}

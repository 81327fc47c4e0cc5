/**
 * JSON query results, written as bytes straight from DuckDB's vectors: no row objects, no
 * JSON.stringify over the data. Row-major `data`; timestamps RFC 3339 UTC; NaN/Infinity -> null;
 * BIGINT, HUGEINT and scale-0 decimals as exact integer digits (a client parsing into doubles
 * rounds beyond 2^53, one that parses big numbers keeps every digit); other decimals as numbers;
 * nested and exotic types through DuckDB's own JSON conversion. Batches of rows are shared between
 * the main thread and the JSON workers (json-workers.ts), which write them in parallel.
 */
import { JsonDuckDBValueConverter, longStrings, stringBytes, type ResultChunk } from '../../duckdb/index.ts';
import { BufferPool } from './buffer-pool.ts';
import { ByteSink } from './byte-sink.ts';
import { vectorWidth } from './column-kind.ts';
import { NativeJsonRows } from './json-native.ts';
import { JsonRows, portableKind, type RowColumn } from './json-rows.ts';
import type { JsonJob } from './json-worker.ts';
import { encodeOnWorker, freeWorker } from './json-workers.ts';
import type { Emit } from '../result-stream.ts';
import type { ResultColumn } from './result.ts';
import type { LongStrings } from '../../duckdb/index.ts';

/** Columns whose long strings the row writer reads (VARCHAR, and text DuckDB rendered). */
const hasStrings = (c: ResultColumn) => c.kind.k === 'varchar' || c.kind.k === 'json';

/**
 * Rows per unit of work: small enough that the first bytes leave early and a worker's share
 * overlaps the scan, large enough that the hand-off to a worker stays a small part of it.
 */
const BATCH_ROWS = 16_384;
/** Batches encoded but not yet sent before `add` waits for the oldest. */
const MAX_QUEUED = 4;
/** Jobs a worker may hold at once: one running, one waiting, so it never idles between batches. */
const WORKER_JOBS = 2;

/** One batch's bytes, possibly still being written by a worker. */
interface Pending {
  parts: Uint8Array[] | null;
  /** Blocks lent by the pool for `parts`, given back once sent. */
  lent?: Uint8Array[];
  done: Promise<void>;
}

/**
 * Writes the body through `emit` as chunks arrive (without `emit`, collects it for `finish`): the
 * opening bytes at once, then batches of rows in order. A batch goes to a JSON worker when one has
 * room, else it is written here; the first batch is always written here.
 */
export class JsonEncoder {
  private readonly emit: Emit;
  private readonly collected: Uint8Array[] = [];
  private readonly here: JsonRows;
  /** The C writer, when it knows every column kind (chunks read in place only). */
  private readonly native: NativeJsonRows | null;
  private readonly portable: boolean;
  private batch: ResultChunk[] = [];
  private batchRows = 0;
  private rows = 0;
  private started = false;
  private readonly queue: Pending[] = [];
  /**
   * Blocks of batches written here after the first, reused once sent (see buffer-pool.ts). The first
   * batch grows its blocks from 4 KiB: a small result is that batch alone, and a full block would cost it.
   */
  private readonly pool = new BufferPool();

  constructor(
    private readonly columns: readonly ResultColumn[],
    emit?: Emit,
  ) {
    this.emit = emit ?? ((parts) => void this.collected.push(...parts));
    this.here = new JsonRows(columns.map((c) => c.kind));
    this.native = NativeJsonRows.for(columns.map((c) => c.kind));
    this.portable = columns.every((c) => portableKind(c.kind));
    const head = new ByteSink();
    // A column DuckDB rendered (see json-render.ts) stands for several.
    const names = columns.flatMap((c) => (c.kind.k === 'json' ? c.kind.names : [c.name]));
    const types = columns.flatMap((c) => (c.kind.k === 'json' ? c.kind.types : [c.type]));
    head.utf8(`{"columns":${JSON.stringify(names)},"types":${JSON.stringify(types)},"data":[`);
    this.emit(head.parts());
  }

  /** Number of rows added so far. */
  get rowCount(): number {
    return this.rows;
  }

  /** Adds a chunk (kept, not copied, until its batch is written); waits while too much is queued. */
  add(chunk: ResultChunk): Promise<void> | undefined {
    if (chunk.rowCount === 0) {
      chunk.release();
      return;
    }
    this.batch.push(chunk);
    this.batchRows += chunk.rowCount;
    this.rows += chunk.rowCount;
    if (this.batchRows >= BATCH_ROWS) return this.flush(MAX_QUEUED);
  }

  /** Writes the rows added so far (see ChunkEncoder.drain). */
  drain(): Promise<void> {
    return this.flush(0);
  }

  /** Writes the remaining rows and the closing bytes. */
  async end(meta: { executionTimeMs: number; rowsCapped?: boolean }): Promise<void> {
    await this.flush(0);
    const tail = new ByteSink();
    const ms = Number.isFinite(meta.executionTimeMs) ? meta.executionTimeMs : 0;
    tail.ascii(`],"row_count":${this.rows},"execution_time_ms":${ms},${meta.rowsCapped ? '"rows_capped":true,' : ''}"success":true}`);
    this.emit(tail.parts());
  }

  /** The complete body as parts (when built without `emit`). */
  async finish(meta: { executionTimeMs: number }): Promise<Uint8Array[]> {
    await this.end(meta);
    return this.collected;
  }

  /** Starts the pending batch, then sends finished batches in order until at most `maxQueued` remain. */
  private async flush(maxQueued: number): Promise<void> {
    if (this.batchRows > 0) {
      const chunks = this.batch;
      const first = !this.started;
      this.batch = [];
      this.batchRows = 0;
      this.started = true;
      // The C writer outruns the hand-off to a worker (a copy of every vector) by far.
      const k = first || !this.portable || (this.native && chunks[0]!.addresses) ? -1 : freeWorker(WORKER_JOBS);
      const release = () => chunks.forEach((c) => c.release());
      if (k < 0) {
        this.queue.push({ parts: this.encodeHere(chunks, first, first ? undefined : this.pool), lent: this.pool.takeLent(), done: Promise.resolve() });
        release();
      } else {
        const { job, transfer } = this.job(chunks, first);
        const entry: Pending = { parts: null, done: Promise.resolve() };
        // A worker that fails leaves its batch to this thread (so the chunks stay until the worker
        // answers): results never depend on workers.
        entry.done = encodeOnWorker(k, job, transfer)
          .catch(() => this.encodeHere(chunks, first))
          .then((parts) => void (entry.parts = parts))
          .finally(release);
        this.queue.push(entry);
      }
    }
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.parts === null) {
        if (this.queue.length <= maxQueued) return;
        await head.done;
      }
      const lent = head.lent;
      this.emit(head.parts!, lent && (() => this.pool.release(lent)));
      this.queue.shift();
    }
  }

  /** Encodes `chunks` on this thread. */
  private encodeHere(chunks: readonly ResultChunk[], first: boolean, pool?: BufferPool): Uint8Array[] {
    const sink = new ByteSink(pool);
    for (const chunk of chunks) {
      if (this.native && chunk.addresses) {
        // Rows handed back share one reading of the chunk's columns (long strings are copied out once).
        let cols: RowColumn[] | null = null;
        this.native.write(sink, chunk, first, (row, rowFirst) => this.here.write(sink, (cols ??= this.rowColumns(chunk, sink)), row, row + 1, rowFirst));
      } else this.here.write(sink, this.rowColumns(chunk, sink), 0, chunk.rowCount, first);
      first = false;
    }
    return sink.parts();
  }

  /** `chunk`'s columns as the JavaScript writer reads them (cells DuckDB renders write into `sink`). */
  private rowColumns(chunk: ResultChunk, sink: ByteSink): RowColumn[] {
    return this.columns.map((c, ci): RowColumn => {
      const width = vectorWidth(c.kind);
      if (c.kind.k === 'text' || c.kind.k === 'blob') return { raw: width > 0 ? chunk.vector(ci, width) : null, cell: this.engineCell(chunk, ci, sink) };
      const raw = width > 0 ? chunk.vector(ci, width) : null;
      return { raw, strings: raw && hasStrings(c) ? longStrings(raw) : undefined };
    });
  }

  /** A worker job for `chunks`: copies of their column memory and long strings. */
  private job(chunks: readonly ResultChunk[], first: boolean): { job: Omit<JsonJob, 'id'>; transfer: ArrayBuffer[] } {
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
        const raw = chunk.vector(ci, width);
        let strings: LongStrings | null = null;
        if (hasStrings(c)) {
          // Both are fresh copies, so they can move to the worker.
          strings = longStrings(raw);
          transfer.push(strings.bytes.buffer as ArrayBuffer, strings.offsets.buffer as ArrayBuffer);
        }
        return { data: own(raw.data), validity: raw.validity ? own(raw.validity) : null, strings };
      }),
    }));
    return { job: { kinds: this.columns.map((c) => c.kind), first, chunks: out }, transfer };
  }

  /** Cells DuckDB renders itself (nested and exotic types, blobs as base64). */
  private engineCell(chunk: ResultChunk, ci: number, sink: ByteSink): (i: number) => void {
    if (this.columns[ci]!.kind.k === 'blob') {
      const raw = chunk.vector(ci, 16);
      return (i) => sink.utf8(JSON.stringify(Buffer.from(stringBytes(raw.data, i)).toString('base64')));
    }
    const values = chunk.node.convertColumnValues(ci, JsonDuckDBValueConverter);
    return (i) => sink.utf8(JSON.stringify(values[i] ?? null));
  }
}

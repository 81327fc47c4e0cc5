/**
 * Arrow IPC stream results (`application/vnd.apache.arrow.stream`), written as the chunks arrive:
 * record batches of up to BATCH_ROWS rows whose fixed-width buffers are the chunks' vector bytes copied in one piece (see arrow-columns.ts),
 * framed by hand (arrow-ipc.ts). An empty result is still a valid stream: the schema and one empty
 * batch, readable by apache-arrow and by DuckDB.
 */
import { Field, Schema } from 'apache-arrow';
import type { ResultChunk } from '../../duckdb/index.ts';
import { ArrowColumn } from './arrow-columns.ts';
import { BufferPool } from './buffer-pool.ts';
import { endOfStream, recordBatchMessage, schemaMessage } from './arrow-ipc.ts';
import type { ResultColumn } from './result.ts';
import type { Emit } from '../result-stream.ts';

/** Rows per record batch: the first bytes leave after this many rows, and each batch is one DuckDB hand-over of memory. */
const BATCH_ROWS = 32_768;

/** Collects chunks into record batches and writes each through `emit` (without `emit`, collects the stream for `finish`). */
export class ArrowEncoder {
  private readonly schema: Schema;
  private readonly builders: ArrowColumn[];
  /** The batches' buffers, back for the next batch once the response has sent them. */
  private readonly pool = new BufferPool();
  private readonly emit: Emit;
  private readonly collected: Uint8Array[] = [];
  private batches = 0;
  private pending = 0;
  private rows = 0;
  /** Chunks of the pending batch: read at `cut`, then released. */
  private held: ResultChunk[] = [];

  constructor(columns: readonly ResultColumn[], emit?: Emit) {
    this.emit = emit ?? ((parts) => void this.collected.push(...parts));
    this.builders = columns.map((c) => new ArrowColumn(c.kind, this.pool));
    this.schema = new Schema(columns.map((c, i) => new Field(c.name, this.builders[i]!.type, true)));
    this.emit([schemaMessage(this.schema)]);
  }

  /** Number of rows added so far. */
  get rowCount(): number {
    return this.rows;
  }

  /** Adds a chunk's rows. */
  add(chunk: ResultChunk): void {
    const n = chunk.rowCount;
    if (n === 0) return chunk.release();
    this.builders.forEach((b, ci) => b.add(chunk, ci));
    this.held.push(chunk);
    this.pending += n;
    this.rows += n;
    if (this.pending >= BATCH_ROWS) this.cut();
  }

  /** Writes the last batch (an empty one when there were no rows: readers want one) and the end-of-stream marker. */
  end(): void {
    if (this.pending > 0 || this.batches === 0) this.cut();
    this.emit([endOfStream()]);
  }

  /** The whole IPC stream as parts (when built without `emit`). */
  finish(): Uint8Array[] {
    this.end();
    return this.collected;
  }

  private cut(): void {
    const parts = recordBatchMessage(this.pending, this.builders.map((b) => b.take()));
    const lent = this.pool.takeLent();
    this.emit(parts, () => this.pool.release(lent));
    this.batches++;
    this.pending = 0;
    for (const c of this.held) c.release();
    this.held = [];
  }
}

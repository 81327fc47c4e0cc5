/**
 * Arrow IPC stream results (`application/vnd.apache.arrow.stream`): record batches of up to
 * BATCH_ROWS rows whose fixed-width buffers are the chunks' vector bytes as read (see arrow-columns.ts),
 * framed by hand (arrow-ipc.ts). An empty result is still a valid stream: the schema and one empty
 * batch, readable by apache-arrow and by DuckDB.
 */
import { Field, Schema } from 'apache-arrow';
import type { DuckDBDataChunk } from '../../duckdb/index.ts';
import { ArrowColumn } from './arrow-columns.ts';
import { endOfStream, recordBatchMessage, schemaMessage } from './arrow-ipc.ts';
import type { ResultColumn } from './result.ts';

const BATCH_ROWS = 122_880;

/** Collects chunks into record batches; `finish` returns the stream. */
export class ArrowEncoder {
  private readonly schema: Schema;
  private readonly builders: ArrowColumn[];
  /** The stream so far. Body parts are JS-owned: node-bindings' vector_get_data copies out of DuckDB. */
  private readonly parts: Uint8Array[] = [];
  private batches = 0;
  private pending = 0;
  private rows = 0;
  /** Chunks of the pending batch: long strings are read through pointers into their memory at `cut`. */
  private held: DuckDBDataChunk[] = [];

  constructor(columns: readonly ResultColumn[]) {
    this.builders = columns.map((c) => new ArrowColumn(c.kind));
    this.schema = new Schema(columns.map((c, i) => new Field(c.name, this.builders[i]!.type, true)));
    this.parts.push(schemaMessage(this.schema));
  }

  /** Number of rows added so far. */
  get rowCount(): number {
    return this.rows;
  }

  /** Adds a chunk's rows. */
  add(chunk: DuckDBDataChunk): void {
    const n = chunk.rowCount;
    if (n === 0) return;
    this.builders.forEach((b, ci) => b.add(chunk, ci));
    this.held.push(chunk);
    this.pending += n;
    this.rows += n;
    if (this.pending >= BATCH_ROWS) this.cut();
  }

  /** The whole IPC stream as parts (the response Blob joins them: one copy, no concatenation here). */
  finish(): Uint8Array[] {
    if (this.pending > 0 || this.batches === 0) this.cut();
    this.parts.push(endOfStream());
    return this.parts;
  }

  private cut(): void {
    const length = this.pending;
    for (const p of recordBatchMessage(length, this.builders.map((b) => b.take()))) this.parts.push(p);
    this.batches++;
    this.pending = 0;
    this.held = [];
  }
}

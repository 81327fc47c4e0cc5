/**
 * Arrow IPC stream results (`application/vnd.apache.arrow.stream`): record batches of up to
 * BATCH_ROWS rows built from DuckDB's memory (see arrow-columns.ts). An empty result is still a
 * valid stream: the schema and one empty batch, readable by apache-arrow and by DuckDB.
 */
import { Field, RecordBatch, Schema, Struct, Table, makeData, tableToIPC } from 'apache-arrow';
import type { DuckDBDataChunk } from '../../duckdb/index.ts';
import { ArrowColumn } from './arrow-columns.ts';
import type { ResultColumn } from './result.ts';

const BATCH_ROWS = 122_880;

/** Collects chunks into record batches; `finish` serializes the stream. */
export class ArrowEncoder {
  private readonly schema: Schema;
  private readonly builders: ArrowColumn[];
  private readonly batches: RecordBatch[] = [];
  private pending = 0;
  private rows = 0;
  /** Chunks whose memory the pending batch still points into. */
  private held: DuckDBDataChunk[] = [];

  constructor(columns: readonly ResultColumn[]) {
    this.builders = columns.map((c) => new ArrowColumn(c.kind));
    this.schema = new Schema(columns.map((c, i) => new Field(c.name, this.builders[i]!.type, true)));
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

  /** The whole IPC stream. */
  finish(): Uint8Array {
    if (this.pending > 0 || this.batches.length === 0) this.cut();
    return tableToIPC(new Table(this.schema, this.batches), 'stream');
  }

  private cut(): void {
    const length = this.pending;
    const children = this.builders.map((b) => b.take());
    this.batches.push(new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length, children, nullCount: 0 })));
    this.pending = 0;
    this.held = [];
  }
}

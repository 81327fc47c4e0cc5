/**
 * The rows of one (database, measurement) not yet handed to a flush: the appended batches
 * themselves, kept as they came (batches are immutable once appended, so a snapshot can share them).
 */
import type { ColumnBatch, ColumnType, MemoryClaim } from '../ingest/index.ts';
import { compatible, widen } from '../parquet/index.ts';

/** Buffered batches of one measurement plus the column types they hold and the WAL tickets they pin. */
export class MeasurementBuffer {
  readonly batches: ColumnBatch[] = [];
  readonly tickets = new Set<unknown>();
  /** Column memory of the batches that came from an arena (given back once their flush registered). */
  readonly memory: MemoryClaim[] = [];
  readonly types = new Map<string, ColumnType>();
  private readonly spellings = new Map<string, string>();
  rows = 0;
  /** Estimated bytes of the batches (see ingest/column-bytes.ts). */
  bytes = 0;
  /** When the first row arrived (ms, monotonic clock); drives the age flush. */
  readonly createdAt = performance.now();

  constructor(
    readonly database: string,
    readonly measurement: string,
  ) {}

  /** Name of a column of `batch` whose type cannot join the buffered rows (a schema change), or null. */
  conflict(batch: ColumnBatch): string | null {
    for (const [name, col] of batch.columns) {
      const have = this.types.get(name);
      if (have !== undefined && !compatible(have, col.type)) return name;
      // `Host` after `host`: one file cannot hold both, so the buffered rows go first.
      const spelled = this.spellings.get(name.toLowerCase());
      if (spelled !== undefined && spelled !== name) return name;
    }
    return null;
  }

  /** Adds a batch of about `bytes` bytes (the caller checked `conflict` first). */
  add(batch: ColumnBatch, bytes: number): void {
    this.batches.push(batch);
    this.rows += batch.length;
    this.bytes += bytes;
    for (const [name, col] of batch.columns) {
      const have = this.types.get(name);
      this.types.set(name, have === undefined ? col.type : widen(have, col.type));
      this.spellings.set(name.toLowerCase(), name);
    }
  }
}

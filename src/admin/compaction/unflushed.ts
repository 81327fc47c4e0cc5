/** Whether buffered batches hold rows in a time range (compaction's check for rows still on their way). */
import type { ColumnBatch } from '../../ingest/index.ts';

/** True when some row of `batches` has time in [from, to) µs. */
export function hasRowsIn(batches: readonly ColumnBatch[], from: number, to: number): boolean {
  for (const b of batches) for (let i = 0; i < b.length; i++) if (b.time[i]! >= from && b.time[i]! < to) return true;
  return false;
}

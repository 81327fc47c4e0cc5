/**
 * The one way rows enter storage, shared by every write route: validate names, authorize every
 * measurement of the batch (all or nothing), register the database, wait for flush-queue room, append to the WAL (when on), then buffer. When `write`
 * resolves the rows are acknowledged: queryable at once and never dropped.
 */
import type { DatabaseStore } from '../catalog/index.ts';
import type { ColumnBatch } from '../ingest/index.ts';
import { invalid, unavailable } from '../lib/errors.ts';
import { assertDatabaseName, columnNameProblem, measurementNameProblem } from '../lib/names.ts';
import { assertAllowed, type TableAccess } from '../lib/table-access.ts';
import type { SvcMetrics } from '../observability/index.ts';
import type { BufferSet } from './buffer-set.ts';

/** The part of the WAL the write path uses; the ticket comes back to the WAL through BufferDeps.onRelease. */
export interface WalAppender {
  append(database: string, batches: ColumnBatch[]): Promise<unknown>;
}

/**
 * A write-ahead log beyond this machine (a cluster's shared WAL): one entry per batch, acknowledged
 * once registered. `current` is false for a ticket of a primary term that has ended: the rows are
 * durable but no longer this node's to buffer (the new primary replays them).
 */
export interface SharedAppender<T> {
  append(database: string, batch: ColumnBatch): Promise<T>;
  current(ticket: T): boolean;
}

/** Accepts parsed rows for a database; see the file comment for the order of steps. */
export class WriteService {
  constructor(
    private readonly deps: {
      buffers: BufferSet;
      databases: DatabaseStore;
      metrics: SvcMetrics;
      wal?: WalAppender | null;
      /** Replaces `wal` on a cluster's primary writer. */
      sharedWal?: SharedAppender<unknown> | null;
      /** Why storage cannot take writes now (refused, missing bucket, no lock); a reason refuses with 503. */
      storageProblem?: () => string | null;
    },
  ) {}

  /** Throws AppError invalid when a measurement or column name is unsafe; returns the row count. */
  validate(batches: readonly ColumnBatch[]): number {
    let rows = 0;
    for (const b of batches) {
      const problem = measurementNameProblem(b.measurement);
      if (problem) throw invalid(problem);
      const lower = new Set<string>();
      for (const name of b.columns.keys()) {
        const key = name.toLowerCase();
        // SQL names are case-insensitive: `Host` and `host` could not both be columns of one file.
        const colProblem =
          columnNameProblem(name) ??
          (key === 'time' ? `column name '${name}' is reserved for the timestamp` : null) ??
          (lower.has(key) ? `columns '${name}' and another differ only in letter case` : null);
        if (colProblem) throw invalid(`measurement '${b.measurement}': ${colProblem}`);
        lower.add(key);
      }
      rows += b.length;
    }
    return rows;
  }

  /**
   * Validates, checks that `access` may write every measurement of the batch (403 naming the first
   * that it may not, and nothing is stored), then makes `batches` durable-as-configured and visible;
   * resolves to the number of rows written.
   */
  async write(database: string, batches: ColumnBatch[], access: TableAccess): Promise<number> {
    assertDatabaseName(database);
    const rows = this.validate(batches);
    if (rows === 0) return 0;
    assertAllowed(access, 'write', database, measurementsOf(batches));
    const problem = this.deps.storageProblem?.();
    if (problem) throw unavailable(`cannot accept write: ${problem}; retry later`, 5);
    this.deps.databases.ensure(database);
    await this.deps.buffers.waitForRoom();
    const wal = this.deps.wal;
    const shared = this.deps.sharedWal;
    if (shared) {
      // One entry per batch: a batch is never split between flushes, so a flush covers whole entries.
      const rowful = batches.filter((b) => b.length > 0);
      const tickets = await Promise.all(rowful.map((b) => shared.append(database, b)));
      rowful.forEach((b, i) => shared.current(tickets[i]) && this.deps.buffers.append(database, [b], tickets[i]));
    } else if (!wal) this.deps.buffers.append(database, batches);
    else {
      // One WAL entry per measurement: an entry is released when its rows are in Parquet, so an entry
      // spanning measurements would be replayed whole after a crash although some of them were flushed.
      for (const group of byMeasurement(batches)) {
        const ticket = await wal.append(database, group);
        this.deps.buffers.append(database, group, ticket);
      }
    }
    this.deps.metrics.ingestRecords.inc(rows);
    this.deps.metrics.ingestBatches.inc();
    return rows;
  }
}

/** Batches grouped by measurement, in first-seen order. */
function byMeasurement(batches: readonly ColumnBatch[]): ColumnBatch[][] {
  const groups = new Map<string, ColumnBatch[]>();
  for (const b of batches) {
    const g = groups.get(b.measurement);
    if (g) g.push(b);
    else groups.set(b.measurement, [b]);
  }
  return [...groups.values()];
}

/** Distinct measurement names of `batches`. */
function measurementsOf(batches: readonly ColumnBatch[]): Set<string> {
  const names = new Set<string>();
  for (const b of batches) names.add(b.measurement);
  return names;
}

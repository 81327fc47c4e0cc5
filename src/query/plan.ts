/**
 * Turns measurement references into sources: the files whose [minTime, maxTime] overlaps the
 * reference's time bounds, and the buffered rows. Pruning only ever drops whole files that cannot
 * hold a matching row; DuckDB still applies every condition, so results equal the unpruned ones.
 * `ORDER BY time DESC LIMIT n` reads the newest files until they hold n rows, plus any file that
 * reaches into the time span those cover.
 */
import type { ColumnBatch } from '../ingest/index.ts';
import type { MeasurementRef, TimeCondition } from './sql/references.ts';
import type { SourceFile, TableSource } from './table-source.ts';

/** Inclusive epoch-µs bounds; undefined = open. */
export interface TimeBounds {
  minTime?: number;
  maxTime?: number;
}

/** What one reference reads. */
export interface PlannedRef {
  ref: MeasurementRef;
  bounds: TimeBounds;
  files: SourceFile[];
  /** Key into `PlannedQuery.buffers`, or null when nothing of this measurement is buffered. */
  bufferKey: string | null;
}

/** Every source of one query; `buffers` holds each measurement's buffered rows once. */
export interface PlannedQuery {
  refs: PlannedRef[];
  buffers: Map<string, { database: string; measurement: string; batches: ColumnBatch[]; rows: number }>;
}

/**
 * Bounds implied by AND-ed conditions, given each condition's value as epoch µs (null: unknown,
 * the condition is ignored). Strict comparisons are widened to inclusive ones: a file ending exactly
 * at the bound is kept, which costs a little reading and never a row. Upper bounds that read the
 * clock are ignored: the query's own now() comes later than the one the bounds were evaluated with,
 * so such a bound could drop a file the query needs (lower bounds only widen that way).
 */
export function boundsOf(conditions: readonly TimeCondition[], values: readonly (number | null)[]): TimeBounds {
  const b: TimeBounds = {};
  conditions.forEach((c, i) => {
    const v = values[i];
    if (v === null || v === undefined || !Number.isFinite(v)) return;
    if (c.op === '>' || c.op === '>=' || c.op === '=') b.minTime = b.minTime === undefined ? v : Math.max(b.minTime, v);
    if ((c.op === '<' || c.op === '<=' || c.op === '=') && !c.usesNow) b.maxTime = b.maxTime === undefined ? v : Math.min(b.maxTime, v);
  });
  return b;
}

/**
 * Plans every reference. Synchronous by design: the manifest reads and buffer snapshots happen in
 * one tick (see table-source.ts). `bounds[i]` belongs to `refs[i]`; `prune` false lists all files.
 */
export function planQuery(source: TableSource, refs: readonly MeasurementRef[], bounds: readonly TimeBounds[], prune = true): PlannedQuery {
  const buffers: PlannedQuery['buffers'] = new Map();
  const planned = refs.map((ref, i): PlannedRef => {
    const b = prune ? (bounds[i] ?? {}) : {};
    const empty = b.minTime !== undefined && b.maxTime !== undefined && b.minTime > b.maxTime;
    let files = empty ? [] : source.files(ref.database, ref.measurement, b.minTime, b.maxTime);
    if (prune && ref.topN) files = topNFiles(files, ref.topN.rows, ref.topN.direction);
    const key = `${ref.database}\u0000${ref.measurement}`;
    if (!buffers.has(key)) {
      const batches = source.buffered(ref.database, ref.measurement);
      const rows = batches.reduce((n, x) => n + x.length, 0);
      buffers.set(key, { database: ref.database, measurement: ref.measurement, batches, rows });
    }
    return { ref, bounds: b, files, bufferKey: buffers.get(key)!.rows > 0 ? key : null };
  });
  for (const [k, v] of buffers) if (v.rows === 0) buffers.delete(k);
  return { refs: planned, buffers };
}

/**
 * Files that can hold the first `rows` rows in time order `direction`: take files from that end
 * until they hold `rows` rows; the n-th row is then no older (newer) than the oldest start (newest
 * end) among them, so every file reaching past that point is kept too.
 */
export function topNFiles(files: readonly SourceFile[], rows: number, direction: 'asc' | 'desc'): SourceFile[] {
  if (rows <= 0 || files.length === 0) return files.slice(0, 0);
  const sorted = [...files].sort((a, b) => (direction === 'desc' ? b.maxTime - a.maxTime : a.minTime - b.minTime));
  let have = 0;
  let cut = direction === 'desc' ? Infinity : -Infinity;
  for (const f of sorted) {
    have += f.rows;
    cut = direction === 'desc' ? Math.min(cut, f.minTime) : Math.max(cut, f.maxTime);
    if (have >= rows) break;
  }
  if (have < rows) return files.slice();
  return files.filter((f) => (direction === 'desc' ? f.maxTime >= cut : f.minTime <= cut));
}

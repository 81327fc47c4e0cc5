/** The WAL's public shapes: the interface the write path codes against and what the routes report. */
import type { ColumnBatch } from '../ingest/index.ts';
import type { SvcMetrics } from '../observability/index.ts';
import type { SyncMode } from './segment.ts';

/** A stable name of the entry a ticket stands for: its segment and offset. */
export function entryId(t: Pick<WalTicket, 'segment' | 'offset'>): string {
  return `${t.segment}:${t.offset}`;
}

/** Proof that one append is in the WAL; hand it back to `release` once every row of it is flushed. */
export interface WalTicket {
  /** Sequence number of the segment holding the entry (0 for the disabled WAL). */
  readonly segment: number;
  /** Byte offset of the entry in that segment. */
  readonly offset: number;
  /** Rows in the append. */
  readonly records: number;
}

/**
 * Buffers one replayed write. `ticket` stands for the entry in its old file: keep it and release it
 * when the rows are flushed, exactly as for a ticket from `append`. Returning a different ticket
 * (because the callback appended the rows again) releases `ticket` at once.
 */
export type ReplayApply = (database: string, batches: ColumnBatch[], ticket: WalTicket) => Promise<WalTicket | void>;

/** Outcome of a replay: files read, rows handed to `apply`, damaged entries skipped. */
export interface ReplayResult {
  files: number;
  records: number;
  dropped: number;
  /** Entries skipped because a release record says their rows were already flushed. */
  skipped: number;
}

/** Settings of an enabled WAL, in the units the code uses. */
export interface WalOptions {
  directory: string;
  syncMode: SyncMode;
  /** Rotate the active segment before it would grow past this. */
  maxSizeBytes: number;
  /** Rotate the active segment once it is this old. */
  maxAgeMs: number;
  /** Sync period (default 100 ms). */
  tickMs?: number;
  /** A fully released active segment older than this is rotated away (default 5 s). */
  idleRotateMs?: number;
}

/** The metric series the WAL moves. */
export type WalMetrics = Pick<
  SvcMetrics,
  'walRecordsPreserved' | 'walDroppedEntries' | 'walFailedWrites' | 'walOversized' | 'walRecovery' | 'walRecoveryRecords'
>;

/** One WAL file as GET /api/wal/files lists it. */
export interface WalFileInfo {
  name: string;
  size_bytes: number;
  size_mb: number;
  /** Last modification, Unix seconds. */
  modified: number;
  /** active: being written; closed: rotated, rows not all flushed; replayed: read back at start, rows
   * not all flushed; unreplayed: found on disk and not (yet) replayed; recovered: replayed and done. */
  state: 'active' | 'closed' | 'replayed' | 'unreplayed' | 'recovered';
  /** Entries whose rows are not yet in flushed files (null when unknown to this process). */
  pending_entries: number | null;
}

/** GET /api/wal/files. */
export interface WalFiles {
  directory: string;
  /** `*.wal` files, oldest first. */
  active: WalFileInfo[];
  /** `*.wal.recovered` files, oldest first. */
  recovered: WalFileInfo[];
  total_size_mb: number;
}

/** GET /api/wal/status. */
export interface WalStatus {
  enabled: boolean;
  configuration: {
    sync_mode: SyncMode;
    directory: string;
    max_size_mb: number;
    max_age_seconds: number;
    current_file: string | null;
  };
  stats: {
    current_size_mb: number;
    current_age_seconds: number;
    total_entries: number;
    total_bytes: number;
    total_records: number;
    total_syncs: number;
    total_rotations: number;
    pending_entries: number;
    live_files: number;
    failed_writes: number;
    oversized_payloads: number;
    last_sync_at: string | null;
  } | null;
  recovery: (ReplayResult & { completed_at: string }) | null;
}

/** GET /api/wal/health. */
export interface WalHealth {
  status: 'healthy' | 'degraded' | 'unhealthy' | 'disabled';
  healthy: boolean;
  enabled: boolean;
  sync_mode: SyncMode;
  last_error: string | null;
  last_error_at: string | null;
  /** Age of the oldest write not yet synced, ms (0 when all is synced, and always 0 in async mode). */
  sync_lag_ms: number;
  pending_entries: number;
  /** Age of the oldest file still holding unflushed rows, seconds (0 when none). */
  oldest_pending_age_seconds: number;
}

/** POST /api/wal/cleanup. */
export interface CleanupResult {
  removed: number;
  freed_bytes: number;
}

/** What the write path, main.ts and the routes see: an enabled Wal or the DisabledWal. */
export interface WriteAheadLog {
  readonly enabled: boolean;
  append(database: string, batches: ColumnBatch[]): Promise<WalTicket>;
  release(ticket: WalTicket): void;
  /** True while the entry (see entryId) is not released. */
  holds(entry: string): boolean;
  replay(apply: ReplayApply): Promise<ReplayResult>;
  status(): WalStatus;
  files(): WalFiles;
  health(): WalHealth;
  cleanup(maxAgeHours: number): Promise<CleanupResult>;
  close(): Promise<void>;
}

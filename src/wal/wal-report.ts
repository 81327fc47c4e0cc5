/** Builds the bodies of GET /api/wal/status and /api/wal/health from the WAL's state and counters. */
import type { Segment } from './segment.ts';
import type { ReplayResult, WalHealth, WalMetrics, WalOptions, WalStatus } from './types.ts';
import { bytesToMb } from './wal-files.ts';

/** Running totals kept by the WAL since it opened. */
export interface WalCounters {
  entries: number;
  bytes: number;
  records: number;
  syncs: number;
  rotations: number;
  lastSyncAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
  recovery: (ReplayResult & { completed_at: string }) | null;
}

/** An error this recent makes the WAL "degraded" in /api/wal/health. */
const RECENT_ERROR_MS = 60_000;
/** Unsynced bytes older than this (ten ticks) mean syncs are not keeping up. */
const SYNC_LAG_LIMIT_MS = 1_000;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const seconds = (ms: number) => Math.floor(ms / 1000);

function pendingOf(live: ReadonlyMap<number, Segment>): { pending: number; oldest: number | null } {
  let pending = 0;
  let oldest: number | null = null;
  for (const seg of live.values()) {
    pending += seg.pending;
    if (seg.pending > 0 && (oldest === null || seg.createdAt < oldest)) oldest = seg.createdAt;
  }
  return { pending, oldest };
}

/** The status body: configuration, the active file, totals since start, the last replay. */
export function buildStatus(
  opts: Required<WalOptions>,
  active: Segment | null,
  live: ReadonlyMap<number, Segment>,
  c: WalCounters,
  metrics: WalMetrics,
): WalStatus {
  const now = Date.now();
  return {
    enabled: true,
    configuration: {
      sync_mode: opts.syncMode,
      directory: opts.directory,
      max_size_mb: bytesToMb(opts.maxSizeBytes),
      max_age_seconds: seconds(opts.maxAgeMs),
      current_file: active ? active.path : null,
    },
    stats: {
      current_size_mb: active ? bytesToMb(active.size) : 0,
      current_age_seconds: active ? seconds(now - active.createdAt) : 0,
      total_entries: c.entries,
      total_bytes: c.bytes,
      total_records: c.records,
      total_syncs: c.syncs,
      total_rotations: c.rotations,
      pending_entries: pendingOf(live).pending,
      live_files: live.size,
      failed_writes: metrics.walFailedWrites.value(),
      oversized_payloads: metrics.walOversized.value(),
      last_sync_at: iso(c.lastSyncAt),
    },
    recovery: c.recovery,
  };
}

/** The health body: unhealthy when closed, degraded after a recent error or when syncs lag. */
export function buildHealth(
  opts: Required<WalOptions>,
  closed: boolean,
  active: Segment | null,
  live: ReadonlyMap<number, Segment>,
  c: WalCounters,
): WalHealth {
  const now = Date.now();
  const { pending, oldest } = pendingOf(live);
  const since = opts.syncMode === 'async' ? null : (active?.unsyncedSince ?? null);
  const lag = since === null ? 0 : now - since;
  const recentError = c.lastErrorAt !== null && now - c.lastErrorAt < RECENT_ERROR_MS;
  const status = closed ? 'unhealthy' : recentError || lag > SYNC_LAG_LIMIT_MS ? 'degraded' : 'healthy';
  return {
    status,
    healthy: status === 'healthy',
    enabled: true,
    sync_mode: opts.syncMode,
    last_error: c.lastError,
    last_error_at: iso(c.lastErrorAt),
    sync_lag_ms: lag,
    pending_entries: pending,
    oldest_pending_age_seconds: oldest === null ? 0 : seconds(now - oldest),
  };
}

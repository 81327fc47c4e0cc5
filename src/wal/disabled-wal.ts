/** The WAL when `wal.enabled = false`: same shape as Wal, appends nothing, reports `enabled: false`. */
import type { ColumnBatch } from '../ingest/index.ts';
import type { Logger } from '../observability/index.ts';
import type { CleanupResult, ReplayResult, WalFiles, WalHealth, WalOptions, WalStatus, WalTicket, WriteAheadLog } from './types.ts';
import { bytesToMb, listFiles, removeRecovered, scanDirectory } from './wal-files.ts';

/** A no-op write-ahead log. Files left in the directory by an earlier run are listed, never replayed or deleted. */
export class DisabledWal implements WriteAheadLog {
  readonly enabled = false;

  constructor(
    private readonly opts: WalOptions,
    private readonly logger?: Logger,
  ) {}

  /** Resolves at once with a ticket that stands for nothing. */
  async append(_database: string, batches: ColumnBatch[]): Promise<WalTicket> {
    let records = 0;
    for (const b of batches) records += b.length;
    return { segment: 0, offset: 0, records };
  }

  /** Does nothing. */
  release(_ticket: WalTicket): void {}

  /** Holds nothing. */
  holds(_entry: string): boolean {
    return false;
  }

  /** Replays nothing; warns when `*.wal` files from an earlier run are waiting (they replay once the WAL is enabled again). */
  async replay(): Promise<ReplayResult> {
    const waiting = scanDirectory(this.opts.directory).segments.length;
    if (waiting > 0)
      this.logger?.warn('wal is disabled but its directory holds unreplayed files; enable the WAL to replay them', {
        directory: this.opts.directory,
        files: waiting,
      });
    return { files: 0, records: 0, dropped: 0, skipped: 0 };
  }

  /** `enabled: false`, the configuration, no counters. */
  status(): WalStatus {
    return {
      enabled: false,
      configuration: {
        sync_mode: this.opts.syncMode,
        directory: this.opts.directory,
        max_size_mb: bytesToMb(this.opts.maxSizeBytes),
        max_age_seconds: Math.floor(this.opts.maxAgeMs / 1000),
        current_file: null,
      },
      stats: null,
      recovery: null,
    };
  }

  /** Whatever WAL files sit in the directory (usually none). */
  files(): WalFiles {
    return listFiles(this.opts.directory, () => null);
  }

  /** Always healthy, status `disabled`. */
  health(): WalHealth {
    return {
      status: 'disabled',
      healthy: true,
      enabled: false,
      sync_mode: this.opts.syncMode,
      last_error: null,
      last_error_at: null,
      sync_lag_ms: 0,
      pending_entries: 0,
      oldest_pending_age_seconds: 0,
    };
  }

  /** Still removes old `*.wal.recovered` files, which only ever hold already replayed data. */
  async cleanup(maxAgeHours: number): Promise<CleanupResult> {
    return removeRecovered(this.opts.directory, maxAgeHours);
  }

  /** Does nothing. */
  async close(): Promise<void> {}
}

/**
 * The write-ahead log: binary batch codec, segment files, batched sync, replay at start.
 * `openWal(config.wal, metrics, logger)` gives a Wal or, when disabled, a DisabledWal of the same shape.
 */
import type { Config } from '../config/index.ts';
import type { Logger } from '../observability/index.ts';
import { DisabledWal } from './disabled-wal.ts';
import type { WalMetrics, WalOptions, WriteAheadLog } from './types.ts';
import { Wal } from './wal.ts';

export { Wal } from './wal.ts';
export { DisabledWal } from './disabled-wal.ts';
export { encodeBatches, decodeBatches, type DecodedWrite } from './batch-codec.ts';
export { entryId } from './types.ts';
export type { SyncMode } from './segment.ts';
export type {
  WalTicket,
  ReplayApply,
  ReplayResult,
  WalOptions,
  WalMetrics,
  WalStatus,
  WalFiles,
  WalFileInfo,
  WalHealth,
  CleanupResult,
  WriteAheadLog,
} from './types.ts';

/** WalOptions from the `[wal]` config section. */
export function walOptions(section: Config['wal']): WalOptions {
  return {
    directory: section.directory,
    syncMode: section.sync_mode,
    maxSizeBytes: section.max_size_mb * 1024 * 1024,
    maxAgeMs: section.max_age_seconds * 1000,
  };
}

/** Opens the WAL the `[wal]` section asks for: a Wal when enabled, else a DisabledWal. */
export async function openWal(section: Config['wal'], metrics: WalMetrics, logger: Logger): Promise<WriteAheadLog> {
  const opts = walOptions(section);
  return section.enabled ? Wal.open(opts, metrics, logger) : new DisabledWal(opts, logger);
}

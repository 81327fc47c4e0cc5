/** The effective compaction settings: the `[compaction]` section with derived values filled in. */
import { availableParallelism, totalmem } from 'node:os';
import type { Config } from '../../config/index.ts';

/** Every knob a compaction run needs, with sizes in bytes and derived defaults resolved. */
export interface CompactionSettings {
  enabled: boolean;
  hourlySchedule: string;
  dailySchedule: string;
  hourlyMinAgeHours: number;
  hourlyMinFiles: number;
  dailyMinFiles: number;
  maxConcurrent: number;
  tempDirectory: string;
  /** DuckDB memory_limit of each merge, bytes. */
  memoryLimitBytes: number;
  /** DuckDB threads of each merge. */
  threads: number;
  maxFilesPerBatch: number;
  /** compaction.test_crash_at: the merge step where a test build kills itself ('' = never). */
  testCrashAt: string;
}

/**
 * Resolves `[compaction]`: an empty memory_limit is database.memory_limit / max_concurrent (DuckDB's own
 * default, 80% of RAM, when that is empty too); threads 0 is half the cores, at least 1.
 */
export function compactionSettings(config: Config, machine = { cores: availableParallelism(), memoryBytes: totalmem() }): CompactionSettings {
  const c = config.compaction;
  const engineMemory = config.database.memory_limit > 0 ? config.database.memory_limit : Math.floor(machine.memoryBytes * 0.8);
  return {
    enabled: c.enabled,
    hourlySchedule: c.hourly_schedule,
    dailySchedule: c.daily_schedule,
    hourlyMinAgeHours: c.hourly_min_age_hours,
    hourlyMinFiles: c.hourly_min_files,
    dailyMinFiles: c.daily_min_files,
    maxConcurrent: c.max_concurrent,
    tempDirectory: c.temp_directory,
    memoryLimitBytes: c.memory_limit > 0 ? c.memory_limit : Math.max(64 * 1024 * 1024, Math.floor(engineMemory / c.max_concurrent)),
    threads: c.threads > 0 ? c.threads : Math.max(1, Math.floor(machine.cores / 2)),
    maxFilesPerBatch: c.max_files_per_batch,
    testCrashAt: c.test_crash_at,
  };
}

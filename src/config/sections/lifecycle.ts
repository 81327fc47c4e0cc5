import { z } from 'zod';
import { bool, int, oneOf, secret, size, str } from '../fields.ts';

/** [delete]: row deletes and database drops. */
export const deleteSection = z.object({
  enabled: bool(false, 'Allow deletes (POST /api/v1/delete, DELETE /api/v1/databases/:name)'),
  max_rows_per_delete: int(0, 'Refuse a delete matching more rows (0: no limit)'),
});

/** [retention]: retention policy scheduler. */
export const retentionSection = z.object({
  enabled: bool(true, 'Run retention policies on their schedules'),
  schedule: str('0 3 * * *', 'Default 5-field cron for policies without their own schedule'),
});

/** [continuous_queries]: continuous query scheduler. */
export const continuousQueriesSection = z.object({
  enabled: bool(true, 'Run continuous queries on their schedules'),
  schedule: str('0 3 * * *', 'Default 5-field cron for queries without schedule or interval'),
});

/** [compaction]: merging small files. */
export const compactionSection = z.object({
  enabled: bool(true, 'Run compaction on its schedules'),
  hourly_schedule: str('0 3 * * *', '5-field cron of the hourly tier'),
  daily_schedule: str('0 3 * * *', '5-field cron of the daily tier'),
  hourly_min_age_hours: int(1, 'An hour partition is compacted once this old'),
  hourly_min_files: int(10, 'Fewest files in an hour partition worth compacting', 2),
  daily_min_files: int(12, 'Fewest files in a day worth compacting', 2),
  max_concurrent: int(2, 'Compaction jobs at once', 1),
  temp_directory: str('./data/compaction', 'Scratch folder for compaction output'),
  memory_limit: size('', 'Memory per job, absolute with unit (empty: database.memory_limit / max_concurrent)', true),
  threads: int(0, 'Threads per job (0: half the cores, at least 1)'),
  max_files_per_batch: filesPerBatch(),
  test_crash_at: oneOf(
    ['', 'after_manifest', 'after_write', 'after_put', 'after_swap'],
    '',
    'Tests only: kill the process (SIGKILL) when a merge reaches this step, to prove crash safety. Release builds (dist/svc) do not contain the hook and ignore it',
  ),
});

/**
 * `compaction.max_files_per_batch`: 2-500. 1 is refused at startup (a batch of one file merges
 * nothing, so it is surely a mistake); any other value out of range falls back to the default 30.
 */
function filesPerBatch() {
  const def = 30;
  return z
    .number()
    .int('must be a whole number')
    .refine((v) => v !== 1, { message: 'must be at least 2 (a batch of one file merges nothing)' })
    .transform((v) => (v < 2 || v > 500 ? def : v))
    .prefault(def)
    .meta({ kind: 'int', default: def, description: 'Most files merged in one batch (2-500; 1 is rejected; other out-of-range values fall back to 30)' });
}

/** [backup]: backup and restore. */
export const backupSection = z.object({
  enabled: bool(true, 'Allow backup and restore'),
  local_path: str('./data/backups', 'Folder that holds backups'),
});

/** [mqtt]: MQTT subscriptions. */
export const mqttSection = z.object({
  enabled: bool(true, 'Run MQTT subscriptions'),
  encryption_key: secret('', 'Base64 32-byte key for secrets at rest (empty: a generated key file next to the metadata database)'),
});

/** [metrics]: metrics history. */
export const metricsSection = z.object({
  timeseries_retention_minutes: int(30, 'How long the metrics history ring keeps samples', 1, 1440),
  timeseries_interval_seconds: int(5, 'Sampling interval of the metrics history', 1),
});

/** [log]: logging. */
export const logSection = z.object({
  level: oneOf(['error', 'warn', 'info', 'debug'] as const, 'info', 'Lowest level written'),
  format: oneOf(['text', 'json'] as const, 'text', 'Log line format: text for people, json for collectors'),
  buffer_size: int(10_000, 'Log lines kept in memory for /api/v1/logs', 100),
});

/** [memory]: the agent memory service. */
export const memorySection = z.object({
  enabled: bool(true, 'Start the agent memory service'),
  host: str('0.0.0.0', 'Address of the memory service'),
  port: int(9100, 'Port of the memory service', 0, 65535),
  database: str('agent_memory', 'Time-series database that holds memories'),
  dedup_window: str('24h', 'Window in which a repeated dedup_key is rejected'),
  db_path: str('./data/memory.db', 'SQLite file for agents, sessions and API keys'),
  svc_url: str('', 'URL of a remote time-series service (empty: the one in this process)'),
  svc_token: secret('', 'Token for the remote time-series service'),
  bootstrap_key: secret('', 'Fixed first admin API key (svcm_..., at least 32 characters) instead of a printed random one'),
  search_candidates: int(1000, 'Best full-text matches (by BM25) re-ranked with recency and importance for a search with a query text', 1, 1_000_000),
  search_recency_half_life: str('30d', 'Age at which a memory\'s recency part of the search score has halved'),
  context_max_memories: int(1000, 'Most memories (newest first) considered for one session context', 1, 100_000),
});


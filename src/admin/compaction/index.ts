/** Compaction: merging an hour partition's small files into one, with true last-write-wins. */
export { CompactionService, type ActiveJob, type CompactionDeps, type Tier } from './compaction-service.ts';
export { compactionSettings, type CompactionSettings } from './compaction-settings.ts';
export { CompactionStore, type JobRecord, type JobTotals } from './compaction-store.ts';
export { recoverCompactions, type RecoveryResult } from './compaction-recovery.ts';
export { checkCron } from './compaction-schedule.ts';
export { triggerBody, candidatesQuery, historyQuery } from './compaction-schema.ts';
export { hasRowsIn } from './unflushed.ts';
export type { UnflushedCheck } from './partition-compactor.ts';

export { DatabaseService, type BufferedView, type DatabaseSummary } from './databases/database-service.ts';
export {
  createMqttService,
  createSubscriptionBody,
  updateSubscriptionBody,
  MqttService,
  type PointWriter,
  type SubscriptionDetails,
} from './mqtt/index.ts';
export {
  CompactionService,
  CompactionStore,
  compactionSettings,
  recoverCompactions,
  checkCron,
  hasRowsIn,
  triggerBody,
  candidatesQuery,
  historyQuery,
  type CompactionSettings,
  type Tier,
} from './compaction/index.ts';
export { secretKeyPath } from './mqtt/index.ts';
export { BackupService, restoreBody, type BackupManifest, type BackupSummary, type ProgressRecord, type KeepRows } from './backup/index.ts';
export { MeasurementLocks } from './measurement-locks.ts';
export { Scheduler, type Trigger } from './scheduler.ts';
export { cronProblem, nextFire } from './cron.ts';
export { ExecutionStore } from './execution-store.ts';
export { DefinitionStore } from './definition-store.ts';
export { RowRemover, type RowRemoval, type RemovalResult } from './rewrite/row-remover.ts';
export { DeleteService, type DeleteSettings } from './delete/delete-service.ts';
export { RetentionService, type RetentionExecution, type RetentionPolicyView } from './retention/retention-service.ts';
export { createRetentionBody, updateRetentionBody, type RetentionPolicy } from './retention/retention-schema.ts';
export { ContinuousQueryService, type CqExecution } from './continuous-queries/cq-service.ts';
export { createCqBody, updateCqBody, type ContinuousQuery } from './continuous-queries/cq-schema.ts';
export { createLifecycle, type Lifecycle, type LifecycleDeps } from './create-lifecycle.ts';
export { IMPORT_MAX_BYTES, ImportService, rfc3339Micros, type ImportDeps, type ImportFormatOptions, type ImportRequest, type ImportResult } from './import/index.ts';
export type { Caller, OwnerAccess } from './caller.ts';

/** Backup and restore: data files, a metadata snapshot and the config, one operation at a time. */
export { BackupService, OPERATION_TIMEOUT_MS, type BackupDeps } from './backup-service.ts';
export { restoreBody } from './backup-schema.ts';
export type { BackupManifest, BackupSummary } from './backup-manifest.ts';
export type { ProgressRecord } from './backup-progress.ts';
export type { KeepRows } from './metadata-store.ts';

/**
 * Backup and restore operations: one at a time (a second request meanwhile is 409), each in the
 * background with a 2-hour timeout, observed through the progress record. Backups are folders under
 * `backup.local_path`; the listing reads their manifest.json files.
 */
import { readdir, rm } from 'node:fs/promises';
import { conflict, forbidden, messageOf } from '../../lib/errors.ts';
import type { Logger } from '../../observability/index.ts';
import { backupPaths, isBackupId, newBackupId } from './backup-layout.ts';
import { summaryOf, type BackupManifest, type BackupSummary } from './backup-manifest.ts';
import { idleProgress, type ProgressRecord } from './backup-progress.ts';
import { readBackupManifest, restoreBackup, type RestoreOptions, type RestoreTargets } from './backup-restorer.ts';
import { writeBackup, type BackupSources } from './backup-writer.ts';

/** The longest a backup or restore may run. */
export const OPERATION_TIMEOUT_MS = 2 * 60 * 60 * 1000;

/** Collaborators, built by main.ts. */
export interface BackupDeps extends BackupSources, RestoreTargets {
  enabled: boolean;
  logger: Logger;
  /** Overrides the 2-hour timeout (tests). */
  timeoutMs?: number;
}

/** Runs backups and restores and lists, shows and deletes backups. */
export class BackupService {
  private progress: ProgressRecord = idleProgress();
  private current: Promise<void> | null = null;

  constructor(private readonly deps: BackupDeps) {}

  /** Starts a backup in the background; 409 while another operation runs. */
  startBackup(): { message: string; status: string; backup_id: string } {
    const id = newBackupId();
    this.begin('backup', id, async (progress, signal) => {
      const m = await writeBackup(this.deps, id, progress, signal);
      this.deps.logger.info('backup completed', { backup_id: id, files: m.total_files, bytes: m.total_bytes });
    });
    return { message: `backup ${id} started`, status: 'running', backup_id: id };
  }

  /** Starts a restore in the background; 404 for an unknown backup, 409 while another operation runs. */
  async startRestore(id: string, opts: RestoreOptions): Promise<{ message: string; status: string; backup_id: string }> {
    this.assertIdle('restore');
    await readBackupManifest(this.deps.root, id);
    this.begin('restore', id, async (progress, signal) => {
      await restoreBackup(this.deps, id, opts, progress, signal);
      this.deps.logger.info('restore completed', { backup_id: id, data: opts.restoreData, metadata: opts.restoreMetadata, config: opts.restoreConfig });
    });
    return { message: `restore of ${id} started`, status: 'running', backup_id: id };
  }

  /** The progress record of the running (or last) operation. */
  status(): ProgressRecord {
    return { ...this.progress };
  }

  /** Complete backups, newest first. */
  async list(): Promise<BackupSummary[]> {
    this.assertEnabled();
    const names = await readdir(this.deps.root).catch(() => [] as string[]);
    const out: BackupSummary[] = [];
    for (const name of names.filter(isBackupId)) {
      const m = await readBackupManifest(this.deps.root, name).catch(() => null);
      if (m) out.push(summaryOf(m));
    }
    return out.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.backup_id.localeCompare(a.backup_id));
  }

  /** The manifest of one backup; 404 when unknown. */
  async get(id: string): Promise<BackupManifest> {
    this.assertEnabled();
    return readBackupManifest(this.deps.root, id);
  }

  /** Deletes a backup folder; 404 when unknown, 409 while an operation uses it. */
  async delete(id: string): Promise<void> {
    this.assertEnabled();
    await readBackupManifest(this.deps.root, id);
    if (this.current && this.progress.backup_id === id) throw conflict(`cannot delete backup ${id}: a ${this.progress.operation} of it is running`);
    await rm(backupPaths(this.deps.root, id).dir, { recursive: true, force: true });
  }

  /** Waits for the running operation (shutdown). */
  async idle(): Promise<void> {
    await this.current?.catch(() => undefined);
  }

  /** 403 when disabled, 409 while an operation runs. */
  private assertIdle(operation: string): void {
    this.assertEnabled();
    if (this.current) throw conflict(`cannot start ${operation}: a ${this.progress.operation} (${this.progress.backup_id}) is already running`);
  }

  private assertEnabled(): void {
    if (!this.deps.enabled) throw forbidden('backup and restore are disabled (set backup.enabled=true)');
  }

  /** Claims the single operation slot synchronously (so two requests cannot both pass) and runs `work`. */
  private begin(operation: 'backup' | 'restore', id: string, work: (p: ProgressRecord, signal: AbortSignal) => Promise<void>): void {
    this.assertIdle(operation);
    const progress: ProgressRecord = { ...idleProgress(), operation, backup_id: id, status: 'running', started_at: new Date().toISOString() };
    this.progress = progress;
    const timeoutMs = this.deps.timeoutMs ?? OPERATION_TIMEOUT_MS;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`cannot finish ${operation}: it took longer than ${timeoutMs / 60000} minutes`)), timeoutMs);
    this.current = (async () => {
      try {
        await work(progress, controller.signal);
        progress.status = 'completed';
      } catch (err) {
        progress.status = 'failed';
        progress.error = messageOf(err);
        this.deps.logger.error(`${operation} failed`, { backup_id: id, error: progress.error });
      } finally {
        clearTimeout(timer);
        progress.finished_at = new Date().toISOString();
        this.current = null;
      }
    })();
  }
}


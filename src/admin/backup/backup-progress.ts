/** The progress record of the backup or restore that runs now (or ran last). */

/** As GET /api/v1/backup/status shows it. */
export interface ProgressRecord {
  operation: 'backup' | 'restore' | null;
  backup_id: string | null;
  status: 'idle' | 'running' | 'completed' | 'failed';
  total_files: number;
  processed_files: number;
  total_bytes: number;
  processed_bytes: number;
  started_at: string | null;
  finished_at: string | null;
  error: string | null;
}

/** The record before any operation ran. */
export const idleProgress = (): ProgressRecord => ({
  operation: null,
  backup_id: null,
  status: 'idle',
  total_files: 0,
  processed_files: 0,
  total_bytes: 0,
  processed_bytes: 0,
  started_at: null,
  finished_at: null,
  error: null,
});

/** Throws the abort reason when the operation was cancelled (timeout). */
export function checkAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason));
}

/**
 * History of retention and continuous-query executions (table `lifecycle_executions`, migration
 * 0008). Each record is kept as JSON under its kind and owner; the newest `KEEP` per owner are kept.
 */
import type { CatalogDb } from '../catalog/index.ts';

/** Which feature an execution belongs to. */
export type ExecutionKind = 'retention' | 'continuous_query';

/** Fields every execution record has; features add their own counts. */
export interface ExecutionBase {
  id: number;
  trigger: 'manual' | 'schedule';
  /** `running`, then `success`, `partial` (some files failed) or `failed`. */
  status: 'running' | 'success' | 'partial' | 'failed';
  started_at: string;
  finished_at: string | null;
  duration_ms: number | null;
  error: string | null;
}

const KEEP = 500;

/** Execution records of retention policies and continuous queries. */
export class ExecutionStore {
  constructor(private readonly db: CatalogDb) {}

  /** Records a new execution; returns its id. */
  start(kind: ExecutionKind, ownerId: number, startedAt: string): number {
    const r = this.db
      .query<{ id: number }, [string, number, string]>(`INSERT INTO lifecycle_executions (kind, owner_id, started_at, record) VALUES (?, ?, ?, '{}') RETURNING id`)
      .get(kind, ownerId, startedAt);
    this.db
      .prepare(`DELETE FROM lifecycle_executions WHERE kind = ? AND owner_id = ? AND id <= (SELECT id FROM lifecycle_executions WHERE kind = ? AND owner_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`)
      .run(kind, ownerId, kind, ownerId, KEEP);
    return r!.id;
  }

  /** Stores the current state of an execution. */
  save<T extends ExecutionBase>(record: T): void {
    this.db.prepare('UPDATE lifecycle_executions SET record = ? WHERE id = ?').run(JSON.stringify(record), record.id);
  }

  /** Executions of one owner, newest first. */
  list<T extends ExecutionBase>(kind: ExecutionKind, ownerId: number, limit: number): T[] {
    return this.db
      .query<{ record: string }, [string, number, number]>('SELECT record FROM lifecycle_executions WHERE kind = ? AND owner_id = ? ORDER BY id DESC LIMIT ?')
      .all(kind, ownerId, limit)
      .map((r) => JSON.parse(r.record) as T)
      .filter((r) => r.id !== undefined);
  }

  /** Marks executions still `running` (the process stopped under them) as failed; returns how many. */
  failInterrupted(finishedAt: string): number {
    const rows = this.db.query<{ record: string }, []>(`SELECT record FROM lifecycle_executions WHERE json_extract(record, '$.status') = 'running'`).all();
    for (const r of rows) {
      const rec = JSON.parse(r.record) as ExecutionBase;
      this.save({ ...rec, status: 'failed', finished_at: finishedAt, error: 'interrupted: the server stopped during the run' });
    }
    return rows.length;
  }

  /** Forgets an owner's history (its definition was deleted). */
  deleteOwner(kind: ExecutionKind, ownerId: number): void {
    this.db.prepare('DELETE FROM lifecycle_executions WHERE kind = ? AND owner_id = ?').run(kind, ownerId);
  }
}

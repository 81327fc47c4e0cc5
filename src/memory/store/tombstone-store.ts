import type { MemoryDb } from './memory-db.ts';

/** A forgotten memory: every read leaves it out. */
export interface Tombstone {
  memory_id: string;
  org_id: string;
  agent_id: string;
  dedup_key: string;
  deleted_at: string;
}

/** Tombstones of forgotten memories in SQLite. */
export class TombstoneStore {
  constructor(private readonly db: MemoryDb) {}

  /** Records a forgotten memory (idempotent). */
  insert(t: Tombstone): void {
    this.db
      .prepare('INSERT OR IGNORE INTO tombstones (memory_id, org_id, agent_id, dedup_key, deleted_at) VALUES (?, ?, ?, ?, ?)')
      .run(t.memory_id, t.org_id, t.agent_id, t.dedup_key, t.deleted_at);
  }

  /** Removes tombstones (their memories were purged from storage; nothing is left to hide). */
  delete(memoryIds: readonly string[]): void {
    const stmt = this.db.prepare('DELETE FROM tombstones WHERE memory_id = ?');
    this.db.transaction(() => {
      for (const id of memoryIds) stmt.run(id);
    })();
  }

  /** Every tombstone (loaded once at start; the set is small next to the memories). */
  all(): Tombstone[] {
    return this.db.query<Tombstone, []>('SELECT * FROM tombstones').all();
  }
}

import type { CatalogDb } from './connection.ts';

/** A registered database. */
export interface DatabaseRecord {
  name: string;
  createdAt: string;
}

/** Registered databases. Writes create theirs implicitly through `ensure`. */
export class DatabaseStore {
  private readonly known = new Set<string>();
  constructor(private readonly db: CatalogDb) {
    for (const r of this.list()) this.known.add(r.name);
  }

  /** Re-reads the known names (after another node changed the table). */
  reload(): void {
    this.known.clear();
    for (const r of this.list()) this.known.add(r.name);
  }

  /** All databases, by name. */
  list(): DatabaseRecord[] {
    return this.db
      .query<{ name: string; created_at: string }, []>('SELECT name, created_at FROM databases ORDER BY name')
      .all()
      .map((r) => ({ name: r.name, createdAt: r.created_at }));
  }

  /** One database, or null. */
  get(name: string): DatabaseRecord | null {
    const r = this.db.query<{ name: string; created_at: string }, [string]>('SELECT name, created_at FROM databases WHERE name = ?').get(name);
    return r ? { name: r.name, createdAt: r.created_at } : null;
  }

  /** Creates a database; returns null when it already exists. */
  create(name: string): DatabaseRecord | null {
    const createdAt = new Date().toISOString();
    const res = this.db.prepare('INSERT OR IGNORE INTO databases (name, created_at) VALUES (?, ?)').run(name, createdAt);
    this.known.add(name);
    return res.changes === 1 ? { name, createdAt } : null;
  }

  /** Registers a database if new; cheap on the write hot path (memory check first). */
  ensure(name: string): void {
    if (this.known.has(name)) return;
    this.create(name);
  }

  /** Removes a database record. */
  delete(name: string): boolean {
    this.known.delete(name);
    return this.db.prepare('DELETE FROM databases WHERE name = ?').run(name).changes === 1;
  }
}

import type { Database } from 'bun:sqlite';

/** One schema step. Ids are unique and never reused; steps run once, in the order given. */
export interface Migration {
  id: string;
  sql: string;
}

/** Applies the migrations not yet recorded in `schema_migrations`, each in its own transaction. */
export function migrate(db: Database, migrations: readonly Migration[]): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
  const done = new Set(db.query<{ id: string }, []>('SELECT id FROM schema_migrations').all().map((r) => r.id));
  const record = db.prepare('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)');
  for (const m of migrations) {
    if (done.has(m.id)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      record.run(m.id, new Date().toISOString());
    })();
  }
}

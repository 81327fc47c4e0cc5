/**
 * The one schema-migration runner, for every SQLite file the process keeps (the catalog, the memory
 * service's). It takes the handle structurally so lib/ stays free of bun:sqlite.
 */

/** One schema step. Ids are unique and never reused; steps run once, in the order given. */
export interface Migration {
  id: string | number;
  sql: string;
}

/** The part of a bun:sqlite Database the runner uses. */
export interface MigratableDb {
  exec(sql: string): unknown;
  query(sql: string): { all(): unknown[] };
  prepare(sql: string): { run(...params: (string | number)[]): unknown };
  transaction(fn: () => void): () => unknown;
}

/**
 * Applies the migrations not yet recorded in `schema_migrations`, each in its own transaction.
 * `idColumn` names the table's key column: the catalog's is `id` (text), the memory file's `version`
 * (integer); both files exist in the field, so each keeps its own.
 */
export function migrate(db: MigratableDb, migrations: readonly Migration[], idColumn: 'id' | 'version' = 'id'): void {
  const keyType = idColumn === 'id' ? 'TEXT' : 'INTEGER';
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (${idColumn} ${keyType} PRIMARY KEY, applied_at TEXT NOT NULL)`);
  const done = new Set((db.query(`SELECT ${idColumn} AS id FROM schema_migrations`).all() as { id: string | number }[]).map((r) => String(r.id)));
  const record = db.prepare(`INSERT INTO schema_migrations (${idColumn}, applied_at) VALUES (?, ?)`);
  for (const m of migrations) {
    if (done.has(String(m.id))) continue;
    db.transaction(() => {
      db.exec(m.sql);
      record.run(m.id, new Date().toISOString());
    })();
  }
}

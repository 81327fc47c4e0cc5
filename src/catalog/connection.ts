import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrate, type Migration } from '../lib/migrate.ts';

/** The metadata database handle that every `*-store.ts` receives. */
export type CatalogDb = Database;

/** Opens (creating) the SQLite metadata file with WAL journaling and runs pending migrations. */
export function openCatalog(path: string, migrations: readonly Migration[]): CatalogDb {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  // WAL lets readers (queries, backups) proceed while a writer commits; NORMAL sync is durable with WAL.
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;');
  migrate(db, migrations);
  return db;
}

export { Database };

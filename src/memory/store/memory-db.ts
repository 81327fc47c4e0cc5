/**
 * The memory service's own SQLite file (`memory.db_path`): agents, sessions, API keys and
 * tombstones of forgotten memories. Migrations run in order, once each, recorded in schema_migrations.
 */
import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrate, type Migration } from '../../lib/migrate.ts';

/** The handle every memory `*-store.ts` receives. */
export type MemoryDb = Database;

const MIGRATIONS: Migration[] = [
  {
    id: 1,
    sql: `
      CREATE TABLE agents (
        agent_id TEXT PRIMARY KEY, org_id TEXT NOT NULL, name TEXT NOT NULL, description TEXT,
        config TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE INDEX agents_org ON agents (org_id, created_at);
      CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY, org_id TEXT NOT NULL, agent_id TEXT NOT NULL, status TEXT NOT NULL,
        metadata TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE INDEX sessions_agent ON sessions (org_id, agent_id, status);
      CREATE TABLE api_keys (
        key_id TEXT PRIMARY KEY, org_id TEXT NOT NULL, name TEXT NOT NULL, prefix TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE, is_admin INTEGER NOT NULL, created_at TEXT NOT NULL,
        last_used_at TEXT, revoked_at TEXT);
      CREATE TABLE tombstones (
        memory_id TEXT PRIMARY KEY, org_id TEXT NOT NULL, agent_id TEXT NOT NULL,
        dedup_key TEXT NOT NULL, deleted_at TEXT NOT NULL);
    `,
  },
];

/** Opens (creating) the SQLite file with WAL journaling and applies pending migrations. */
export function openMemoryDb(path: string): MemoryDb {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
  migrate(db, MIGRATIONS, 'version');
  return db;
}

/**
 * The memory service's own SQLite file (`memory.db_path`): agents, sessions, API keys,
 * tombstones of forgotten memories and the search index. Migrations run in order, once each, recorded in schema_migrations.
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
  {
    // The search index: the current version of every memory (a copy; the time-series store stays the
    // source of truth) and two FTS5 indexes over its content, external-content so the text is kept once.
    // secure-delete removes a deleted memory's terms from the index pages themselves (purge).
    id: 2,
    sql: `
      CREATE TABLE memory_index (
        rowid INTEGER PRIMARY KEY, memory_id TEXT NOT NULL UNIQUE, org_id TEXT NOT NULL, agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL, memory_type TEXT NOT NULL, event_type TEXT NOT NULL, content TEXT NOT NULL,
        metadata TEXT NOT NULL, tags TEXT NOT NULL, importance REAL NOT NULL, dedup_key TEXT NOT NULL,
        parent_id TEXT NOT NULL, time_us INTEGER NOT NULL, version INTEGER NOT NULL, expires_us INTEGER NOT NULL,
        updated_us INTEGER NOT NULL);
      CREATE INDEX memory_index_org_agent ON memory_index (org_id, agent_id, time_us);
      CREATE VIRTUAL TABLE memory_fts USING fts5(content, content='memory_index', content_rowid='rowid',
        tokenize='porter unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE memory_fts_cjk USING fts5(content, content='memory_index', content_rowid='rowid', tokenize='trigram');
      INSERT INTO memory_fts(memory_fts, rank) VALUES ('secure-delete', 1);
      INSERT INTO memory_fts_cjk(memory_fts_cjk, rank) VALUES ('secure-delete', 1);
    `,
  },
  {
    // A full-text search joins every match to its row for the filters and the ranking; read from the
    // wide rows (content, metadata) that join costs a page a match. This narrow copy of what the common
    // filters and the ranking read, keyed by rowid, keeps the join in few, cached pages.
    id: 3,
    sql: `CREATE INDEX memory_index_rank ON memory_index (rowid, org_id, agent_id, session_id, memory_type, time_us, importance, expires_us);`,
  },
  {
    // Admin keys act inside their own organization; a key marked here crosses organizations. The first
    // key ever created is the bootstrap key, which always did.
    id: 4,
    sql: `
      ALTER TABLE api_keys ADD COLUMN all_orgs INTEGER NOT NULL DEFAULT 0;
      UPDATE api_keys SET all_orgs = 1
        WHERE is_admin = 1 AND key_id = (SELECT key_id FROM api_keys ORDER BY created_at, key_id LIMIT 1);
    `,
  },
];

/** Address space mapped for reads (not memory used: the kernel's page cache backs it). */
const MMAP_BYTES = 4 * 1024 ** 3;
/** SQLite's own page cache, for pages written and for what mmap does not cover. */
const CACHE_KIB = 64 * 1024;

/** Opens (creating) the SQLite file with WAL journaling and applies pending migrations. */
export function openMemoryDb(path: string): MemoryDb {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  // secure_delete: freed pages are zeroed, so a purged memory's text does not linger in free space.
  // mmap: searches read many index pages; mapped, a page read is a memory access, not a system call.
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA secure_delete = ON; PRAGMA mmap_size = ${MMAP_BYTES}; PRAGMA cache_size = -${CACHE_KIB};`);
  migrate(db, MIGRATIONS, 'version');
  return db;
}

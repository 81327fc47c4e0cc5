import type { Migration } from './migrate.ts';

/**
 * The metadata schema of the time-series service, in order. Append new steps; never edit a landed one.
 * Features own their tables' SQL in their `*-store.ts`, but the DDL lives here so one list shows the schema.
 */
export const migrations: readonly Migration[] = [
  {
    id: '0001_tokens',
    sql: `CREATE TABLE tokens (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      description TEXT NOT NULL DEFAULT '',
      is_admin INTEGER NOT NULL DEFAULT 0,
      prefix TEXT NOT NULL,
      hash TEXT NOT NULL,
      permissions TEXT NOT NULL DEFAULT '[]',
      enabled INTEGER NOT NULL DEFAULT 1,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      last_used_at TEXT,
      expires_at TEXT
    );
    CREATE INDEX tokens_prefix ON tokens(prefix);`,
  },
  {
    id: '0002_databases',
    sql: `CREATE TABLE databases (name TEXT PRIMARY KEY, created_at TEXT NOT NULL);`,
  },
  {
    id: '0003_file_manifest',
    sql: `CREATE TABLE files (
      path TEXT PRIMARY KEY,
      database TEXT NOT NULL,
      measurement TEXT NOT NULL,
      hour INTEGER NOT NULL,
      min_time INTEGER NOT NULL,
      max_time INTEGER NOT NULL,
      rows INTEGER NOT NULL,
      bytes INTEGER NOT NULL,
      columns TEXT NOT NULL,
      seq INTEGER NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE INDEX files_by_measurement ON files(database, measurement, min_time, max_time);
    CREATE TABLE file_seq (id INTEGER PRIMARY KEY CHECK (id = 1), next INTEGER NOT NULL);
    INSERT INTO file_seq (id, next) VALUES (1, 1);`,
  },
];

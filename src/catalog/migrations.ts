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
  {
    id: '0004_mqtt_subscriptions',
    sql: `CREATE TABLE mqtt_subscriptions (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      broker TEXT NOT NULL,
      topics TEXT NOT NULL,
      database TEXT NOT NULL,
      qos INTEGER NOT NULL,
      client_id TEXT NOT NULL,
      username TEXT,
      password_enc TEXT,
      tls_enabled INTEGER NOT NULL,
      tls_cert_path TEXT,
      tls_key_path TEXT,
      tls_ca_path TEXT,
      topic_mapping TEXT NOT NULL,
      keep_alive_seconds INTEGER NOT NULL,
      connect_timeout_seconds REAL NOT NULL,
      reconnect_min_seconds REAL NOT NULL,
      reconnect_max_seconds REAL NOT NULL,
      auto_start INTEGER NOT NULL,
      desired_status TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );`,
  },
  {
    id: '0005_file_tombstones',
    sql: `CREATE TABLE file_tombstones (path TEXT PRIMARY KEY, created_at TEXT NOT NULL);`,
  },
  {
    id: '0006_pending_files',
    sql: `CREATE TABLE pending_files (path TEXT PRIMARY KEY, wal_covered INTEGER NOT NULL, created_at TEXT NOT NULL);`,
  },
];

import type { Migration } from '../lib/migrate.ts';

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
    sql: `CREATE TABLE pending_files (path TEXT PRIMARY KEY, drop_on_recovery INTEGER NOT NULL, created_at TEXT NOT NULL);`,
  },
  {
    // Compaction: a row per merge between "about to swap" and "swapped" (crash recovery), and job history.
    id: '0007_compaction',
    sql: `CREATE TABLE compaction_manifests (
      id TEXT PRIMARY KEY,
      job_id TEXT NOT NULL,
      database TEXT NOT NULL,
      measurement TEXT NOT NULL,
      hour INTEGER NOT NULL,
      inputs TEXT NOT NULL,
      output TEXT NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE TABLE compaction_jobs (
      job_id TEXT PRIMARY KEY,
      tier TEXT NOT NULL,
      database TEXT,
      measurement TEXT,
      status TEXT NOT NULL,
      started_at TEXT NOT NULL,
      finished_at TEXT NOT NULL,
      partitions INTEGER NOT NULL,
      partitions_skipped INTEGER NOT NULL,
      files_in INTEGER NOT NULL,
      files_out INTEGER NOT NULL,
      bytes_in INTEGER NOT NULL,
      bytes_out INTEGER NOT NULL,
      rows_in INTEGER NOT NULL,
      rows_out INTEGER NOT NULL,
      error TEXT
    );
    CREATE INDEX compaction_jobs_by_time ON compaction_jobs(finished_at);`,
  },
  {
    // Retention policies and continuous queries (definitions as JSON, owned by admin/*-store.ts) and
    // the history of their executions.
    id: '0008_retention_and_continuous_queries',
    sql: `CREATE TABLE retention_policies (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      name TEXT NOT NULL UNIQUE,
      definition TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE TABLE continuous_queries (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      name TEXT NOT NULL UNIQUE,
      definition TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE TABLE lifecycle_executions (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      kind TEXT NOT NULL,
      owner_id INTEGER NOT NULL,
      started_at TEXT NOT NULL,
      record TEXT NOT NULL
    );
    CREATE INDEX lifecycle_executions_by_owner ON lifecycle_executions(kind, owner_id, id);`,
  },
  {
    // RBAC (auth/rbac/rbac-store.ts): organizations hold teams; a team has token members and roles; a
    // role may narrow itself to measurements. Deleting a parent (or a token) removes what hangs off it.
    // Every table has one key column (a membership's is `<team_id>:<token_id>`), as cluster replication needs.
    id: '0009_rbac',
    sql: `CREATE TABLE rbac_organizations (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      description TEXT NOT NULL DEFAULT '',
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE TABLE rbac_teams (
      id TEXT PRIMARY KEY,
      org_id TEXT NOT NULL REFERENCES rbac_organizations(id) ON DELETE CASCADE,
      name TEXT NOT NULL,
      description TEXT NOT NULL DEFAULT '',
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      UNIQUE (org_id, name)
    );
    CREATE TABLE rbac_members (
      id TEXT PRIMARY KEY,
      team_id TEXT NOT NULL REFERENCES rbac_teams(id) ON DELETE CASCADE,
      token_id TEXT NOT NULL REFERENCES tokens(id) ON DELETE CASCADE,
      created_at TEXT NOT NULL,
      UNIQUE (team_id, token_id)
    );
    CREATE INDEX rbac_members_by_token ON rbac_members(token_id);
    CREATE TABLE rbac_roles (
      id TEXT PRIMARY KEY,
      team_id TEXT NOT NULL REFERENCES rbac_teams(id) ON DELETE CASCADE,
      name TEXT NOT NULL,
      database_pattern TEXT NOT NULL,
      permissions TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      UNIQUE (team_id, name)
    );
    CREATE TABLE rbac_measurement_grants (
      id TEXT PRIMARY KEY,
      role_id TEXT NOT NULL REFERENCES rbac_roles(id) ON DELETE CASCADE,
      measurement_pattern TEXT NOT NULL,
      permissions TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE INDEX rbac_grants_by_role ON rbac_measurement_grants(role_id);`,
  },
  {
    // Query governance (policies, daily usage counters; governance/*-store.ts) and the audit log
    // (audit/audit-store.ts). One policy per token; token_id NULL is the default policy.
    id: '0010_governance_and_audit',
    sql: `CREATE TABLE governance_policies (
      id TEXT PRIMARY KEY,
      token_id TEXT UNIQUE,
      limits TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX governance_policies_one_default ON governance_policies((token_id IS NULL)) WHERE token_id IS NULL;
    CREATE TABLE governance_usage_daily (
      token_id TEXT NOT NULL,
      day TEXT NOT NULL,
      queries INTEGER NOT NULL DEFAULT 0,
      rows_returned INTEGER NOT NULL DEFAULT 0,
      rejected INTEGER NOT NULL DEFAULT 0,
      capped INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (token_id, day)
    );
    CREATE TABLE audit_events (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      time_ms INTEGER NOT NULL,
      token_id TEXT,
      token_name TEXT,
      client_ip TEXT,
      method TEXT NOT NULL,
      path TEXT NOT NULL,
      status INTEGER NOT NULL,
      duration_ms REAL NOT NULL,
      database TEXT,
      action TEXT NOT NULL,
      detail TEXT
    );
    CREATE INDEX audit_events_by_time ON audit_events(time_ms);
    CREATE INDEX audit_events_by_token ON audit_events(token_id, time_ms);
    CREATE INDEX audit_events_by_action ON audit_events(action, time_ms);`,
  },
  {
    // Postgres wire logins: a SCRAM-SHA-256 verifier per token (never the secret), all under one
    // installation salt, because the SCRAM exchange sends the salt before it can know which token
    // the client holds (the Postgres user name is free, not a token name). Older tokens keep NULL.
    id: '0011_token_scram_verifiers',
    sql: `ALTER TABLE tokens ADD COLUMN scram_verifier TEXT;
    CREATE TABLE scram_salt (id INTEGER PRIMARY KEY CHECK (id = 1), salt TEXT NOT NULL);
    INSERT INTO scram_salt (id, salt) VALUES (1, lower(hex(randomblob(16))));`,
  },
  {
    // Tiered storage (tiering/): each file's tier and when it moved; policies (users change them:
    // replicated in a cluster); migration jobs; and moves in progress, which start-up settles by the
    // file's tier in the manifest (hot: the cold copy is dropped; cold: the hot copy is).
    id: '0012_tiering',
    sql: `ALTER TABLE files ADD COLUMN tier TEXT NOT NULL DEFAULT 'hot';
    ALTER TABLE files ADD COLUMN moved_at TEXT;
    CREATE INDEX files_by_tier ON files(tier, database);
    CREATE TABLE tiering_policies (
      id TEXT PRIMARY KEY,
      database TEXT NOT NULL,
      measurement TEXT,
      hot_max_age_days INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX tiering_policies_target ON tiering_policies(database, coalesce(measurement, ''));
    CREATE TABLE tiering_jobs (
      id TEXT PRIMARY KEY,
      status TEXT NOT NULL,
      trigger TEXT NOT NULL,
      started_at TEXT NOT NULL,
      finished_at TEXT,
      files_moved INTEGER NOT NULL DEFAULT 0,
      bytes_moved INTEGER NOT NULL DEFAULT 0,
      failures INTEGER NOT NULL DEFAULT 0,
      error TEXT
    );
    CREATE TABLE tiering_moves (path TEXT PRIMARY KEY, started_at TEXT NOT NULL);`,
  },
  {
    // Service tokens keep the system databases (the memory service's): the in-process one is marked
    // at every start, a remote memory service's by an admin.
    id: '0013_service_tokens',
    sql: `ALTER TABLE tokens ADD COLUMN is_service INTEGER NOT NULL DEFAULT 0;`,
  },
];

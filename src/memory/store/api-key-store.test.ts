import { expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKeyStore } from './api-key-store.ts';
import { openMemoryDb } from './memory-db.ts';

// A memory DB from before migration 4: its first key (the bootstrap key) keeps crossing organizations.
test('the upgrade marks the first key ever created, and only it, as acting in every organization', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-keys-'));
  try {
    const path = join(dir, 'memory.db');
    const old = openMemoryDb(path);
    old.exec('DELETE FROM schema_migrations WHERE version = 4; ALTER TABLE api_keys DROP COLUMN all_orgs;');
    const insert = old.prepare('INSERT INTO api_keys (key_id, org_id, name, prefix, hash, is_admin, created_at) VALUES (?, ?, ?, ?, ?, 1, ?)');
    insert.run('key_first', 'default', 'admin', 'svcm_a', 'h1', '2024-01-01T00:00:00Z');
    insert.run('key_later', 'b', 'b-admin', 'svcm_b', 'h2', '2024-02-01T00:00:00Z');
    old.close();
    const db = openMemoryDb(path);
    expect(new ApiKeyStore(db).list().map((k) => [k.key_id, k.all_orgs])).toEqual([['key_first', true], ['key_later', false]]);
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

import type { MemoryDb } from './memory-db.ts';

/** An API key as stored: only the SHA-256 of the secret, plus a short display prefix. */
export interface ApiKeyRecord {
  key_id: string;
  org_id: string;
  name: string;
  prefix: string;
  hash: string;
  is_admin: boolean;
  /** Acts in every organization (the bootstrap key, and admin keys it marks so); others act in their own. */
  all_orgs: boolean;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

type ApiKeyRow = Omit<ApiKeyRecord, 'is_admin' | 'all_orgs'> & { is_admin: number; all_orgs: number };

const toRecord = (r: ApiKeyRow): ApiKeyRecord => ({ ...r, is_admin: r.is_admin === 1, all_orgs: r.all_orgs === 1 });

/** API keys in SQLite. */
export class ApiKeyStore {
  constructor(private readonly db: MemoryDb) {}

  /** Number of keys ever created (revoked included): zero means first run. */
  count(): number {
    return this.db.query<{ n: number }, []>('SELECT count(*) AS n FROM api_keys').get()?.n ?? 0;
  }

  /** Inserts a new key. */
  insert(k: ApiKeyRecord): void {
    this.db
      .prepare('INSERT INTO api_keys (key_id, org_id, name, prefix, hash, is_admin, all_orgs, created_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(k.key_id, k.org_id, k.name, k.prefix, k.hash, k.is_admin ? 1 : 0, k.all_orgs ? 1 : 0, k.created_at, k.last_used_at, k.revoked_at);
  }

  /** The key with this secret hash, or null. */
  byHash(hash: string): ApiKeyRecord | null {
    const r = this.db.query<ApiKeyRow, [string]>('SELECT * FROM api_keys WHERE hash = ?').get(hash);
    return r ? toRecord(r) : null;
  }

  /** One key, or null. */
  get(keyId: string): ApiKeyRecord | null {
    const r = this.db.query<ApiKeyRow, [string]>('SELECT * FROM api_keys WHERE key_id = ?').get(keyId);
    return r ? toRecord(r) : null;
  }

  /** All keys, or those of one organization, oldest first. */
  list(orgId?: string): ApiKeyRecord[] {
    if (orgId === undefined) return this.db.query<ApiKeyRow, []>('SELECT * FROM api_keys ORDER BY created_at, key_id').all().map(toRecord);
    return this.db.query<ApiKeyRow, [string]>('SELECT * FROM api_keys WHERE org_id = ? ORDER BY created_at, key_id').all(orgId).map(toRecord);
  }

  /** Active admin keys, and of them those acting in every organization. */
  activeAdmins(): { all: number; allOrgs: number } {
    const r = this.db.query<{ n: number; x: number | null }, []>('SELECT count(*) AS n, sum(all_orgs) AS x FROM api_keys WHERE is_admin = 1 AND revoked_at IS NULL').get();
    return { all: r?.n ?? 0, allOrgs: r?.x ?? 0 };
  }

  /** Marks a key revoked. */
  revoke(keyId: string, at: string): void {
    this.db.prepare('UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL').run(at, keyId);
  }

  /** Records a use. */
  touch(keyId: string, at: string): void {
    this.db.prepare('UPDATE api_keys SET last_used_at = ? WHERE key_id = ?').run(at, keyId);
  }
}

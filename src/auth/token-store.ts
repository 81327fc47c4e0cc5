import type { CatalogDb } from '../catalog/index.ts';

/** A token as stored: never the secret, only its SHA-256 and a lookup prefix. */
export interface TokenRecord {
  id: string;
  name: string;
  description: string;
  isAdmin: boolean;
  prefix: string;
  hash: string;
  permissions: string[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  lastUsedAt: string | null;
  /** SCRAM-SHA-256 verifier for Postgres wire logins (lib/scram.ts); null for tokens created before it existed. */
  scramVerifier: string | null;
  /** The token of a service that keeps the system databases (the memory service's): it reaches them and nothing else. */
  isService: boolean;
}

interface Row {
  id: string;
  name: string;
  description: string;
  is_admin: number;
  prefix: string;
  hash: string;
  permissions: string;
  enabled: number;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
  scram_verifier: string | null;
  is_service: number;
}

const toRecord = (r: Row): TokenRecord => ({
  id: r.id,
  name: r.name,
  description: r.description,
  isAdmin: r.is_admin === 1,
  prefix: r.prefix,
  hash: r.hash,
  permissions: JSON.parse(r.permissions) as string[],
  enabled: r.enabled === 1,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  lastUsedAt: r.last_used_at,
  scramVerifier: r.scram_verifier ?? null,
  isService: r.is_service === 1,
});

/** Persistence of tokens in the metadata database. */
export class TokenStore {
  constructor(private readonly db: CatalogDb) {}

  /** Number of tokens (any state). */
  count(): number {
    return this.db.query<{ n: number }, []>('SELECT count(*) AS n FROM tokens').get()!.n;
  }

  /** Inserts a new token record. */
  insert(t: TokenRecord): void {
    this.db
      .prepare(
        `INSERT INTO tokens (id, name, description, is_admin, prefix, hash, permissions, enabled, created_at, updated_at, scram_verifier, is_service)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(t.id, t.name, t.description, t.isAdmin ? 1 : 0, t.prefix, t.hash, JSON.stringify(t.permissions), t.enabled ? 1 : 0, t.createdAt, t.updatedAt, t.scramVerifier, t.isService ? 1 : 0);
  }

  /** All tokens, oldest first. */
  list(): TokenRecord[] {
    return this.db.query<Row, []>('SELECT * FROM tokens ORDER BY created_at, id').all().map(toRecord);
  }

  /** One token by id, or null. */
  get(id: string): TokenRecord | null {
    const r = this.db.query<Row, [string]>('SELECT * FROM tokens WHERE id = ?').get(id);
    return r ? toRecord(r) : null;
  }

  /** Tokens whose lookup prefix matches (normally one). */
  byPrefix(prefix: string): TokenRecord[] {
    return this.db.query<Row, [string]>('SELECT * FROM tokens WHERE prefix = ?').all(prefix).map(toRecord);
  }

  /** A name is unique among tokens. */
  byName(name: string): TokenRecord | null {
    const r = this.db.query<Row, [string]>('SELECT * FROM tokens WHERE name = ?').get(name);
    return r ? toRecord(r) : null;
  }

  /** Writes every mutable field of `t`. */
  update(t: TokenRecord): void {
    this.db
      .prepare(
        `UPDATE tokens SET name = ?, description = ?, is_admin = ?, prefix = ?, hash = ?, permissions = ?, enabled = ?, updated_at = ?, scram_verifier = ?, is_service = ?
         WHERE id = ?`,
      )
      .run(t.name, t.description, t.isAdmin ? 1 : 0, t.prefix, t.hash, JSON.stringify(t.permissions), t.enabled ? 1 : 0, t.updatedAt, t.scramVerifier, t.isService ? 1 : 0, t.id);
  }

  /** Records use without rewriting the row each request (at most once a minute per token). */
  touch(id: string, at: string): void {
    this.db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?').run(at, id);
  }

  /** The installation's SCRAM salt (hex), shared by every token's verifier (see migration 0009). */
  scramSalt(): string {
    return this.db.query<{ salt: string }, []>('SELECT salt FROM scram_salt WHERE id = 1').get()!.salt;
  }

  /** Enabled tokens that carry a SCRAM verifier. */
  withScramVerifier(): TokenRecord[] {
    return this.db.query<Row, []>('SELECT * FROM tokens WHERE enabled = 1 AND scram_verifier IS NOT NULL').all().map(toRecord);
  }

  /** Removes a token for good. */
  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM tokens WHERE id = ?').run(id).changes === 1;
  }
}

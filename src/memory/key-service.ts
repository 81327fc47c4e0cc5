/**
 * API keys: `svcm_` + 256 random bits (base64url); only the SHA-256 is stored, looked up by hash.
 * The first run creates an admin key and returns it once (or takes a fixed one from config, for tests
 * and automated setups). Revocation is immediate (no cache).
 */
import { randomToken, sha256Hex } from '../lib/crypto.ts';
import { invalid, notFound } from '../lib/errors.ts';
import { newId } from './ids.ts';
import type { ApiKeyRecord, ApiKeyStore } from './store/api-key-store.ts';

/** The fixed prefix of every memory-service API key. */
export const KEY_PREFIX = 'svcm_';
const MIN_FIXED_LENGTH = 32;
/** The organization that exists from the start. */
export const DEFAULT_ORG = 'default';

/** Who is calling, as read by handlers. */
export interface KeyPrincipal {
  keyId: string;
  orgId: string;
  isAdmin: boolean;
}

/** A key record as the API shows it (never the hash). */
export type PublicKey = Omit<ApiKeyRecord, 'hash'>;

const publicOf = ({ hash: _hash, ...rest }: ApiKeyRecord): PublicKey => rest;

/** Key creation, verification, listing and revocation. */
export class KeyService {
  private readonly touched = new Map<string, number>();

  constructor(private readonly store: ApiKeyStore) {}

  /**
   * On first run (no key ever created) creates the admin key. `fixed` sets its value (must start
   * with `svcm_` and be at least 32 characters). Returns the plaintext only when it was generated.
   */
  bootstrap(fixed: string): { created: boolean; key: string | null } {
    if (fixed && (!fixed.startsWith(KEY_PREFIX) || fixed.length < MIN_FIXED_LENGTH))
      throw invalid(`memory.bootstrap_key must start with '${KEY_PREFIX}' and be at least ${MIN_FIXED_LENGTH} characters`);
    if (this.store.count() > 0) return { created: false, key: null };
    const { key } = this.create({ name: 'admin', org_id: DEFAULT_ORG, is_admin: true }, fixed || undefined);
    return { created: true, key: fixed ? null : key };
  }

  /** Creates a key; the plaintext is returned here only and never stored. */
  create(input: { name: string; org_id: string; is_admin: boolean }, fixedValue?: string): { record: PublicKey; key: string } {
    const key = fixedValue ?? KEY_PREFIX + randomToken(32);
    const record: ApiKeyRecord = {
      key_id: newId('key'),
      org_id: input.org_id,
      name: input.name,
      prefix: key.slice(0, KEY_PREFIX.length + 6),
      hash: sha256Hex(key),
      is_admin: input.is_admin,
      created_at: new Date().toISOString(),
      last_used_at: null,
      revoked_at: null,
    };
    this.store.insert(record);
    return { record: publicOf(record), key };
  }

  /** The principal of a valid, unrevoked key, or null. */
  verify(key: string): KeyPrincipal | null {
    if (!key.startsWith(KEY_PREFIX)) return null;
    const k = this.store.byHash(sha256Hex(key));
    if (!k || k.revoked_at !== null) return null;
    this.noteUse(k.key_id);
    return { keyId: k.key_id, orgId: k.org_id, isAdmin: k.is_admin };
  }

  /** All keys, without secrets. */
  list(): PublicKey[] {
    return this.store.list().map(publicOf);
  }

  /** Revokes a key at once; the last active admin key cannot be revoked. 404 when unknown. */
  revoke(keyId: string): PublicKey {
    const k = this.store.get(keyId);
    if (!k) throw notFound(`API key '${keyId}' not found`);
    if (k.revoked_at === null && k.is_admin && this.store.activeAdmins() <= 1)
      throw invalid('cannot revoke the last active admin key: create another admin key first');
    this.store.revoke(keyId, new Date().toISOString());
    return publicOf(this.store.get(keyId)!);
  }

  /** last_used_at is written at most once a minute per key, to keep reads off the write path. */
  private noteUse(keyId: string): void {
    const now = Date.now();
    if ((this.touched.get(keyId) ?? 0) > now - 60_000) return;
    this.touched.set(keyId, now);
    this.store.touch(keyId, new Date(now).toISOString());
  }
}

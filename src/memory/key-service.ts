/**
 * API keys: `svcm_` + 256 random bits (base64url); only the SHA-256 is stored, looked up by hash.
 * The first run creates an admin key and returns it once (or takes a fixed one from config, for tests
 * and automated setups). Revocation is immediate (no cache).
 */
import { randomToken, sha256Hex } from '../lib/crypto.ts';
import { forbidden, invalid, notFound } from '../lib/errors.ts';
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
  /** Manages keys of every organization (the bootstrap key and keys it marks); others only their own. */
  allOrgs: boolean;
}

/** A key to create; `org_id` defaults to the caller's organization. */
export interface KeyRequest {
  name: string;
  org_id?: string;
  is_admin: boolean;
  all_orgs: boolean;
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
    const { key } = this.insert({ name: 'admin', org_id: DEFAULT_ORG, is_admin: true, all_orgs: true }, fixed || undefined);
    return { created: true, key: fixed ? null : key };
  }

  /**
   * Creates a key for `caller` (an admin key); the plaintext is returned here only and never stored.
   * 403 for another organization or an every-organization key unless `caller` acts in every organization.
   */
  create(input: KeyRequest, caller: KeyPrincipal): { record: PublicKey; key: string } {
    const orgId = input.org_id ?? caller.orgId;
    if (orgId !== caller.orgId && !caller.allOrgs)
      throw forbidden(`cannot create a key for organization '${orgId}': an admin key acts inside its own organization ('${caller.orgId}')`);
    if (input.all_orgs && !caller.allOrgs) throw forbidden('cannot create a key for every organization: only such a key can');
    if (input.all_orgs && !input.is_admin) throw invalid('all_orgs: only an admin key can act in every organization (add is_admin: true)');
    return this.insert({ ...input, org_id: orgId });
  }

  private insert(input: { name: string; org_id: string; is_admin: boolean; all_orgs: boolean }, fixedValue?: string): { record: PublicKey; key: string } {
    const key = fixedValue ?? KEY_PREFIX + randomToken(32);
    const record: ApiKeyRecord = {
      key_id: newId('key'),
      org_id: input.org_id,
      name: input.name,
      prefix: key.slice(0, KEY_PREFIX.length + 6),
      hash: sha256Hex(key),
      is_admin: input.is_admin,
      all_orgs: input.all_orgs,
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
    return { keyId: k.key_id, orgId: k.org_id, isAdmin: k.is_admin, allOrgs: k.all_orgs };
  }

  /** The keys `caller` manages (its organization's, or every one's), without secrets. */
  list(caller: KeyPrincipal): PublicKey[] {
    return this.store.list(caller.allOrgs ? undefined : caller.orgId).map(publicOf);
  }

  /**
   * Revokes a key at once. 404 when unknown or of another organization than `caller`'s (unless it acts
   * in every organization): key ids of other organizations are not disclosed, as their memories are not.
   * The last active admin key, and the last acting in every organization, cannot be revoked.
   */
  revoke(keyId: string, caller: KeyPrincipal): PublicKey {
    const k = this.store.get(keyId);
    if (!k || (k.org_id !== caller.orgId && !caller.allOrgs)) throw notFound(`API key '${keyId}' not found`);
    const active = this.store.activeAdmins();
    if (k.revoked_at === null && k.is_admin && active.all <= 1)
      throw invalid('cannot revoke the last active admin key: create another admin key first');
    if (k.revoked_at === null && k.all_orgs && active.allOrgs <= 1)
      throw invalid('cannot revoke the last active key for every organization: create another one first (all_orgs: true)');
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

import { randomId, randomToken, safeEqual, sha256Hex } from '../lib/crypto.ts';
import { checkScramProof, parseScramVerifier, SCRAM_ITERATIONS, scramVerifier } from '../lib/scram.ts';
import { conflict, invalid, notFound } from '../lib/errors.ts';
import { TokenCache } from './token-cache.ts';
import type { TokenRecord, TokenStore } from './token-store.ts';

/** Who is calling: the verified token's identity, read by route handlers from the request context. */
export interface Principal {
  tokenId: string;
  name: string;
  isAdmin: boolean;
  permissions: string[];
  /** The credential of a service svc runs itself (the in-process memory service): it keeps the system databases. */
  isService: boolean;
}

/** The permissions an ordinary token may carry; an empty list means read and write (the spec's default token). */
export const PERMISSIONS = ['read', 'write', 'delete'] as const;

/** Whether `p` may `permission` (admins may all; an empty permission list means read and write). */
export function mayDo(p: Principal, permission: (typeof PERMISSIONS)[number]): boolean {
  if (p.isAdmin) return true;
  return p.permissions.length === 0 ? permission !== 'delete' : p.permissions.includes(permission);
}

/** The principal a stored token stands for. */
const principalOf = (t: TokenRecord): Principal => ({ tokenId: t.id, name: t.name, isAdmin: t.isAdmin, permissions: t.permissions, isService: t.isService });

const TOKEN_PREFIX = 'svc_';
/** Characters of a token used as its lookup key; the rest is checked only through the hash. */
const LOOKUP_CHARS = 12;
const MIN_BOOTSTRAP_LENGTH = 32;

const lookupPrefix = (token: string) => token.slice(0, LOOKUP_CHARS);

/** Tokens: creation, verification with a cache, and the spec's state machine (rotate, revoke, delete). */
export class TokenService {
  private readonly cache: TokenCache<Principal>;
  private readonly lastTouched = new Map<string, number>();

  constructor(
    private readonly store: TokenStore,
    opts: { cacheTtlSec: number; maxCacheSize: number },
  ) {
    this.cache = new TokenCache<Principal>(opts.cacheTtlSec * 1000, opts.maxCacheSize);
  }

  /** True when no token exists yet (first start). */
  isEmpty(): boolean {
    return this.store.count() === 0;
  }

  /**
   * Creates the first admin token when none exists. `fixed` (SVC_AUTH_BOOTSTRAP_TOKEN) sets its value.
   * Returns the plaintext only when a token was created and its value is new to the operator.
   */
  bootstrap(fixed: string | undefined): { created: boolean; token: string | null } {
    if (fixed !== undefined && fixed.length < MIN_BOOTSTRAP_LENGTH)
      throw invalid(`SVC_AUTH_BOOTSTRAP_TOKEN must be at least ${MIN_BOOTSTRAP_LENGTH} characters (got ${fixed.length})`);
    if (fixed !== undefined && this.verify(fixed)) return { created: false, token: null };
    if (!this.isEmpty()) return { created: false, token: null };
    const { token } = this.create({ name: 'admin', description: 'initial admin token', isAdmin: true, permissions: [] }, fixed);
    return { created: true, token: fixed === undefined ? token : null };
  }

  /** Creates a token and returns its record with the plaintext, which is never stored. */
  create(
    input: { name: string; description?: string; isAdmin?: boolean; permissions?: string[]; isService?: boolean },
    fixedValue?: string,
  ): { record: TokenRecord; token: string } {
    if (this.store.byName(input.name)) throw conflict(`a token named '${input.name}' already exists`);
    const token = fixedValue ?? TOKEN_PREFIX + randomToken(32);
    const now = new Date().toISOString();
    const record: TokenRecord = {
      id: randomId(8),
      name: input.name,
      description: input.description ?? '',
      isAdmin: input.isAdmin ?? false,
      prefix: lookupPrefix(token),
      hash: sha256Hex(token),
      permissions: input.permissions ?? [],
      enabled: true,
      createdAt: now,
      updatedAt: now,
      lastUsedAt: null,
      scramVerifier: this.verifierOf(token),
      isService: input.isService ?? false,
    };
    this.store.insert(record);
    return { record, token };
  }

  /** The principal of a valid, enabled token, or null. Cached by hash for `cache_ttl`. */
  verify(token: string): Principal | null {
    if (!token) return null;
    const hash = sha256Hex(token);
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const match = this.store.byPrefix(lookupPrefix(token)).find((t) => safeEqual(t.hash, hash));
    if (!match || !match.enabled) return null;
    const principal = principalOf(match);
    this.cache.set(hash, principal);
    this.noteUse(match.id);
    return principal;
  }

  /**
   * A fresh secret for an internal non-admin token named `name` with exactly `permissions` (created
   * when missing, rotated when it exists), so its plaintext lives only in the memory of the process that asked.
   * The token is marked as a service's: it reaches the system databases and nothing else.
   */
  issueServiceToken(name: string, description: string, permissions: string[] = []): string {
    const existing = this.store.byName(name);
    if (existing?.enabled) {
      if (existing.permissions.join(',') !== permissions.join(',') || !existing.isService) this.update(existing.id, { permissions, isService: true });
      return this.rotate(existing.id).token;
    }
    if (existing) this.delete(existing.id);
    return this.create({ name, description, permissions, isService: true }).token;
  }

  /** All token records. */
  list(): TokenRecord[] {
    return this.store.list();
  }

  /** One token record; 404 when unknown. */
  get(id: string): TokenRecord {
    const t = this.store.get(id);
    if (!t) throw notFound(`token '${id}' not found`);
    return t;
  }

  /** Updates metadata (name, description, admin and service flags, permissions). */
  update(id: string, patch: { name?: string; description?: string; isAdmin?: boolean; permissions?: string[]; isService?: boolean }): TokenRecord {
    const t = this.get(id);
    if (patch.name !== undefined && patch.name !== t.name && this.store.byName(patch.name))
      throw conflict(`a token named '${patch.name}' already exists`);
    const next: TokenRecord = {
      ...t,
      name: patch.name ?? t.name,
      description: patch.description ?? t.description,
      isAdmin: patch.isAdmin ?? t.isAdmin,
      permissions: patch.permissions ?? t.permissions,
      isService: patch.isService ?? t.isService,
      updatedAt: new Date().toISOString(),
    };
    this.store.update(next);
    this.forget(id);
    return next;
  }

  /** New secret, same id and permissions; the old secret stops working at once. */
  rotate(id: string): { record: TokenRecord; token: string } {
    const t = this.get(id);
    const token = TOKEN_PREFIX + randomToken(32);
    const next: TokenRecord = { ...t, prefix: lookupPrefix(token), hash: sha256Hex(token), scramVerifier: this.verifierOf(token), updatedAt: new Date().toISOString() };
    this.store.update(next);
    this.forget(id);
    return { record: next, token };
  }

  /** Invalidates a token now; it stays listed as revoked. */
  revoke(id: string): TokenRecord {
    const t = this.get(id);
    const next: TokenRecord = { ...t, enabled: false, updatedAt: new Date().toISOString() };
    this.store.update(next);
    this.forget(id);
    return next;
  }

  /** Removes a token permanently. */
  delete(id: string): void {
    this.get(id);
    this.store.delete(id);
    this.forget(id);
  }

  /** The salt and iteration count every SCRAM exchange offers (one per installation; see migration 0009). */
  scramParameters(): { salt: Buffer; iterations: number } {
    return { salt: Buffer.from(this.store.scramSalt(), 'hex'), iterations: SCRAM_ITERATIONS };
  }

  /**
   * The principal whose SCRAM verifier accepts `proof` for `authMessage`, with the server signature
   * to return; null when none does. Tries each enabled token's verifier (one HMAC and one hash each).
   */
  verifyScram(authMessage: string, proof: Buffer): { principal: Principal; serverSignature: Buffer } | null {
    for (const t of this.store.withScramVerifier()) {
      const v = parseScramVerifier(t.scramVerifier);
      const serverSignature = v ? checkScramProof(v, authMessage, proof) : null;
      if (!serverSignature) continue;
      this.noteUse(t.id);
      return { principal: principalOf(t), serverSignature };
    }
    return null;
  }

  /** Cache figures for /api/v1/auth/cache/stats. */
  cacheStats() {
    const total = this.cache.hits + this.cache.misses;
    return {
      size: this.cache.size,
      max_size: this.cache.maxSize,
      ttl_seconds: this.cache.ttlMs / 1000,
      hits: this.cache.hits,
      misses: this.cache.misses,
      evictions: this.cache.evictions,
      hit_rate: total === 0 ? 0 : this.cache.hits / total,
    };
  }

  /** Forces re-validation of every cached token; returns how many were dropped. */
  invalidateCache(): number {
    return this.cache.clear();
  }

  private verifierOf(token: string): string {
    return scramVerifier(token, Buffer.from(this.store.scramSalt(), 'hex'), SCRAM_ITERATIONS);
  }

  private forget(id: string): void {
    this.cache.deleteWhere((p) => p.tokenId === id);
  }

  private noteUse(id: string): void {
    const now = Date.now();
    if ((this.lastTouched.get(id) ?? 0) > now - 60_000) return;
    this.lastTouched.set(id, now);
    this.store.touch(id, new Date(now).toISOString());
  }
}

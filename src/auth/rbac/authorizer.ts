/**
 * The one authorizer: turns a caller (or the owner of a scheduled job) into the TableAccess that the
 * query engine, the write path and the admin features consult for every measurement they touch.
 * Compiled policies are kept per token and dropped on every RBAC change, so a change applies to the
 * very next request; token changes reach it through the principal (token-service.ts forgets it).
 * The walls of the system databases are applied here too (system-databases.ts), so every route,
 * listing and scheduled job that consults an access inherits them.
 */
import { setBounded } from '../../lib/bounded-map.ts';
import { UNRESTRICTED, type DataAction, type TableAccess } from '../../lib/table-access.ts';
import type { Principal } from '../token-service.ts';
import type { TokenStore } from '../token-store.ts';
import { compilePolicy, ownActions, PolicyAccess, type Decision, type TokenPolicy } from './policy.ts';
import type { RbacStore } from './rbac-store.ts';
import type { SystemDatabases } from './system-databases.ts';

/** Policies kept compiled; a token beyond this is compiled again on its next request. */
const MAX_POLICIES = 10_000;
const NO_TEAM: TokenPolicy = { member: false, roles: [], decided: new Map() };
/** Access of a token that no longer exists or is disabled (a scheduled job whose owner is gone). */
const NOTHING: TableAccess = { allows: () => false, allowsDatabase: () => false, ownsSystemDatabase: () => false };

/** Decides what a principal may do with which measurement. */
export class Authorizer {
  private readonly policies = new Map<string, TokenPolicy>();

  constructor(
    private readonly store: RbacStore,
    private readonly tokens: TokenStore,
    /** rbac.enabled: false leaves only each token's own permissions. */
    private readonly enabled: boolean,
    private readonly system: SystemDatabases,
  ) {}

  /**
   * The access of one request's caller; null (auth off) and admins may do everything. A service
   * credential reaches only the system databases; every other token reaches all but them.
   */
  accessFor(principal: Principal | null): TableAccess {
    if (!principal || principal.isAdmin) return UNRESTRICTED;
    const own = new PolicyAccess(ownActions(principal.permissions), this.enabled ? this.policyOf(principal.tokenId) : NO_TEAM);
    return principal.isService ? this.system.confined(own) : this.system.walled(own);
  }

  /** The access of a stored token by id (owners of scheduled jobs): nothing when it is gone or disabled. */
  accessForToken(tokenId: string): TableAccess {
    const t = this.tokens.get(tokenId);
    if (!t || !t.enabled) return NOTHING;
    return this.accessFor({ tokenId: t.id, name: t.name, isAdmin: t.isAdmin, permissions: t.permissions, isService: t.isService });
  }

  /** The decision and its reason for a stored token (GET /api/v1/rbac/check); null when the token is unknown. */
  explain(tokenId: string, action: DataAction, database: string, measurement: string): Decision | null {
    const t = this.tokens.get(tokenId);
    if (!t) return null;
    if (!t.enabled) return { allowed: false, reason: 'the token is revoked' };
    if (t.isAdmin) return { allowed: true, reason: 'admin tokens may do everything; roles do not apply to them' };
    if (this.system.has(database) !== t.isService)
      return { allowed: false, reason: t.isService ? 'the token is a service credential of svc: it reaches only the system databases' : `${database} is a system database: only the service that keeps it and admins reach it` };
    if (!this.enabled) return { allowed: ownActions(t.permissions).has(action), reason: `rbac.enabled is false: the token's own permissions decide` };
    return new PolicyAccess(ownActions(t.permissions), this.policyOf(t.id)).explain(action, database, measurement);
  }

  /** Drops every compiled policy: called after each RBAC change (and a metadata restore). */
  invalidate(): void {
    this.policies.clear();
  }

  private policyOf(tokenId: string): TokenPolicy {
    const cached = this.policies.get(tokenId);
    if (cached) return cached;
    const { member, rows } = this.store.policyRows(tokenId);
    const policy = member ? compilePolicy(true, rows) : NO_TEAM;
    setBounded(this.policies, tokenId, policy, MAX_POLICIES);
    return policy;
  }
}

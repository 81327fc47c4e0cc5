/**
 * The compiled RBAC policy of one token: its teams' roles with their matchers, and the rule that
 * decides (issue 23): a token in one or more teams may do A on D.M only when its own permissions
 * allow A, and some role of its teams matches D with A, and that role either has no measurement
 * permissions or one of them matches M with A. Roles narrow a token's rights; they never widen them.
 */
import { setBounded } from '../../lib/bounded-map.ts';
import type { DataAction, TableAccess } from '../../lib/table-access.ts';
import { compilePattern, type Matcher } from './pattern.ts';
import type { PolicyRow } from './rbac-store.ts';

interface CompiledGrant {
  pattern: string;
  matches: Matcher;
  actions: ReadonlySet<string>;
}

interface CompiledRole {
  id: string;
  name: string;
  team: string;
  databasePattern: string;
  matchesDatabase: Matcher;
  actions: ReadonlySet<string>;
  grants: CompiledGrant[];
}

/** The roles of a token's teams, compiled; `member` false means it is in no team. */
export interface TokenPolicy {
  member: boolean;
  roles: CompiledRole[];
  /**
   * What the roles decided for recent (action, database, measurement) keys: a request repeats the
   * same few names, and with tens of roles the scan costs microseconds. Dropped with the policy.
   */
  decided: Map<string, boolean>;
}

/** Decisions remembered per policy. */
const MAX_DECIDED = 1024;

/** Compiles the rows of RbacStore.policyRows (grouped by role, in order). */
export function compilePolicy(member: boolean, rows: readonly PolicyRow[]): TokenPolicy {
  const byRole = new Map<string, CompiledRole>();
  for (const r of rows) {
    let role = byRole.get(r.role_id);
    if (!role) {
      role = {
        id: r.role_id,
        name: r.role_name,
        team: r.team_name,
        databasePattern: r.database_pattern,
        matchesDatabase: compilePattern(r.database_pattern),
        actions: new Set(JSON.parse(r.role_permissions) as string[]),
        grants: [],
      };
      byRole.set(r.role_id, role);
    }
    if (r.measurement_pattern !== null && r.grant_permissions !== null)
      role.grants.push({ pattern: r.measurement_pattern, matches: compilePattern(r.measurement_pattern), actions: new Set(JSON.parse(r.grant_permissions) as string[]) });
  }
  return { member, roles: [...byRole.values()], decided: new Map() };
}

/** A decision and the sentence that explains it (GET /api/v1/rbac/check). */
export interface Decision {
  allowed: boolean;
  reason: string;
}

const DEFAULT_ACTIONS: ReadonlySet<string> = new Set(['read', 'write']);

/** Actions the token's own list grants: an empty list means read and write (auth/token-service.ts). */
export function ownActions(permissions: readonly string[]): ReadonlySet<string> {
  return permissions.length === 0 ? DEFAULT_ACTIONS : new Set(permissions);
}

/** The TableAccess of a non-admin token: its own actions, narrowed by `policy` when it is in a team. */
export class PolicyAccess implements TableAccess {
  constructor(
    private readonly own: ReadonlySet<string>,
    private readonly policy: TokenPolicy,
  ) {}

  allows(action: DataAction, database: string, measurement: string): boolean {
    if (!this.own.has(action)) return false;
    if (!this.policy.member) return true;
    const key = `${action}\u0000${database}\u0000${measurement}`;
    let allowed = this.policy.decided.get(key);
    if (allowed === undefined) setBounded(this.policy.decided, key, (allowed = this.byRoles(action, database, measurement)), MAX_DECIDED);
    return allowed;
  }

  private byRoles(action: DataAction, database: string, measurement: string): boolean {
    for (const role of this.policy.roles) {
      if (!role.actions.has(action) || !role.matchesDatabase(database)) continue;
      if (role.grants.length === 0) return true;
      for (const g of role.grants) if (g.actions.has(action) && g.matches(measurement)) return true;
    }
    return false;
  }

  allowsDatabase(action: DataAction, database: string): boolean {
    if (!this.own.has(action)) return false;
    if (!this.policy.member) return true;
    return this.policy.roles.some((r) => r.actions.has(action) && r.matchesDatabase(database) && (r.grants.length === 0 || r.grants.some((g) => g.actions.has(action))));
  }

  /** A token's own permissions and roles never make it the keeper of a system database (system-databases.ts does). */
  ownsSystemDatabase(): boolean {
    return false;
  }

  /** The decision on `action` for `database`.`measurement`, with the role or rule that made it. */
  explain(action: DataAction, database: string, measurement: string): Decision {
    const target = `${action} on ${database}.${measurement}`;
    if (!this.own.has(action)) return { allowed: false, reason: `the token's own permissions do not include '${action}'; roles never widen them` };
    if (!this.policy.member) return { allowed: true, reason: `the token is in no team, so its own permissions decide: they include '${action}'` };
    for (const role of this.policy.roles) {
      if (!role.actions.has(action) || !role.matchesDatabase(database)) continue;
      if (role.grants.length === 0) return { allowed: true, reason: `role '${role.name}' of team '${role.team}' (database pattern '${role.databasePattern}') allows ${target}` };
      const g = role.grants.find((x) => x.actions.has(action) && x.matches(measurement));
      if (g) return { allowed: true, reason: `role '${role.name}' of team '${role.team}' allows ${target} through measurement pattern '${g.pattern}'` };
    }
    return { allowed: false, reason: `no role of the token's teams allows ${target}` };
  }
}

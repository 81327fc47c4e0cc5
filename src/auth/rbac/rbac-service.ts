/**
 * RBAC records: organizations > teams > (members, roles > measurement permissions). Every change
 * drops the authorizer's compiled policies, so it applies to the next request; `onChange` listeners
 * (the cluster's replication, later) hear about each one.
 */
import type { z } from 'zod';
import { randomId } from '../../lib/crypto.ts';
import { conflict, notFound } from '../../lib/errors.ts';
import type { TokenStore } from '../token-store.ts';
import type { Authorizer } from './authorizer.ts';
import type { grantBody, grantPatch, organizationBody, organizationPatch, roleBody, rolePatch } from './rbac-schema.ts';
import type { MeasurementGrant, Member, Organization, RbacStore, Role, Team } from './rbac-store.ts';

const now = () => new Date().toISOString();

/** Runs a write; a UNIQUE violation becomes a 409 naming what already exists. */
function unique<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof Error && /UNIQUE constraint failed/.test(err.message)) throw conflict(`${what} already exists`);
    throw err;
  }
}

/** The RBAC model's operations, each validated by the routes' schemas first. */
export class RbacService {
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly store: RbacStore,
    private readonly tokens: TokenStore,
    private readonly authorizer: Authorizer,
  ) {}

  /** Calls `fn` after every change. */
  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }

  createOrganization(b: z.output<typeof organizationBody>): Organization {
    const at = now();
    const o: Organization = { id: randomId(8), name: b.name, description: b.description, created_at: at, updated_at: at };
    unique(`an organization named '${b.name}'`, () => this.store.insertOrganization(o));
    return this.changed(o);
  }
  organizations(): Organization[] {
    return this.store.organizations();
  }
  organization(id: string): Organization {
    return this.store.organization(id) ?? missing('organization', id);
  }
  updateOrganization(id: string, p: z.output<typeof organizationPatch>): Organization {
    const o = { ...this.organization(id), ...defined(p), updated_at: now() };
    unique(`an organization named '${o.name}'`, () => this.store.updateOrganization(o));
    return this.changed(o);
  }
  deleteOrganization(id: string): void {
    this.organization(id);
    this.store.deleteOrganization(id);
    this.changed(null);
  }

  createTeam(orgId: string, b: z.output<typeof organizationBody>): Team {
    this.organization(orgId);
    const at = now();
    const t: Team = { id: randomId(8), org_id: orgId, name: b.name, description: b.description, created_at: at, updated_at: at };
    unique(`a team named '${b.name}' in this organization`, () => this.store.insertTeam(t));
    return this.changed(t);
  }
  teams(orgId: string): Team[] {
    this.organization(orgId);
    return this.store.teams(orgId);
  }
  team(id: string): Team {
    return this.store.team(id) ?? missing('team', id);
  }
  updateTeam(id: string, p: z.output<typeof organizationPatch>): Team {
    const t = { ...this.team(id), ...defined(p), updated_at: now() };
    unique(`a team named '${t.name}' in this organization`, () => this.store.updateTeam(t));
    return this.changed(t);
  }
  deleteTeam(id: string): void {
    this.team(id);
    this.store.deleteTeam(id);
    this.changed(null);
  }

  /** Adds a token to a team (idempotent); 404 for an unknown team or token. */
  addMember(teamId: string, tokenId: string): Member {
    this.team(teamId);
    if (!this.tokens.get(tokenId)) missing('token', tokenId);
    this.store.addMember(teamId, tokenId, now());
    return this.changed(this.store.members(teamId).find((m) => m.token_id === tokenId)!);
  }
  members(teamId: string): Member[] {
    this.team(teamId);
    return this.store.members(teamId);
  }
  removeMember(teamId: string, tokenId: string): void {
    this.team(teamId);
    if (!this.store.removeMember(teamId, tokenId)) missing(`member of team '${teamId}': token`, tokenId);
    this.changed(null);
  }

  createRole(teamId: string, b: z.output<typeof roleBody>): Role {
    this.team(teamId);
    const at = now();
    const r: Role = { id: randomId(8), team_id: teamId, ...b, created_at: at, updated_at: at };
    unique(`a role named '${b.name}' in this team`, () => this.store.insertRole(r));
    return this.changed(r);
  }
  roles(teamId: string): Role[] {
    this.team(teamId);
    return this.store.roles(teamId);
  }
  role(id: string): Role {
    return this.store.role(id) ?? missing('role', id);
  }
  updateRole(id: string, p: z.output<typeof rolePatch>): Role {
    const r = { ...this.role(id), ...defined(p), updated_at: now() };
    unique(`a role named '${r.name}' in this team`, () => this.store.updateRole(r));
    return this.changed(r);
  }
  deleteRole(id: string): void {
    this.role(id);
    this.store.deleteRole(id);
    this.changed(null);
  }

  createGrant(roleId: string, b: z.output<typeof grantBody>): MeasurementGrant {
    this.role(roleId);
    const at = now();
    const g: MeasurementGrant = { id: randomId(8), role_id: roleId, ...b, created_at: at, updated_at: at };
    this.store.insertGrant(g);
    return this.changed(g);
  }
  grants(roleId: string): MeasurementGrant[] {
    this.role(roleId);
    return this.store.grants(roleId);
  }
  updateGrant(roleId: string, id: string, p: z.output<typeof grantPatch>): MeasurementGrant {
    const g = { ...this.grantOf(roleId, id), ...defined(p), updated_at: now() };
    this.store.updateGrant(g);
    return this.changed(g);
  }
  deleteGrant(roleId: string, id: string): void {
    this.grantOf(roleId, id);
    this.store.deleteGrant(id);
    this.changed(null);
  }

  /** A token's teams, each with its roles and their measurement permissions (GET .../tokens/:id/effective). */
  effective(tokenId: string) {
    const t = this.tokens.get(tokenId) ?? missing('token', tokenId);
    const teams = this.store.teamsOfToken(tokenId).map((team) => ({
      ...team,
      roles: this.store.roles(team.id).map((role) => ({ ...role, measurements: this.store.grants(role.id) })),
    }));
    const narrowed = !t.isAdmin && teams.length > 0;
    return { token_id: t.id, name: t.name, is_admin: t.isAdmin, permissions: t.permissions, narrowed_by_roles: narrowed, teams };
  }

  private grantOf(roleId: string, id: string): MeasurementGrant {
    this.role(roleId);
    const g = this.store.grant(id);
    if (!g || g.role_id !== roleId) missing('measurement permission', id);
    return g!;
  }

  private changed<T>(value: T): T {
    this.authorizer.invalidate();
    for (const fn of this.listeners) fn();
    return value;
  }
}

function missing(what: string, id: string): never {
  throw notFound(`${what} '${id}' not found`);
}

/** The fields of a patch that were given (undefined never overwrites). */
function defined<T extends object>(p: T): Partial<T> {
  return Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)) as Partial<T>;
}

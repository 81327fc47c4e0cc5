/**
 * Persistence of RBAC records in the metadata database (tables of migration 0009_rbac). Records come
 * out in their API shape; permissions are stored as JSON arrays. Cascades are the schema's.
 */
import type { CatalogDb } from '../../catalog/index.ts';
import type { DataAction } from '../../lib/table-access.ts';

/** An organization: the top of the tree. */
export interface Organization {
  id: string;
  name: string;
  description: string;
  created_at: string;
  updated_at: string;
}
/** A team of one organization. */
export interface Team extends Organization {
  org_id: string;
}
/** A token's membership in a team. */
export interface Member {
  team_id: string;
  token_id: string;
  token_name: string;
  created_at: string;
}
/** A role of a team: actions on databases matching `database_pattern`. */
export interface Role {
  id: string;
  team_id: string;
  name: string;
  database_pattern: string;
  permissions: DataAction[];
  created_at: string;
  updated_at: string;
}
/** A measurement permission of a role: narrows the role to matching measurements. */
export interface MeasurementGrant {
  id: string;
  role_id: string;
  measurement_pattern: string;
  permissions: DataAction[];
  created_at: string;
  updated_at: string;
}

type Stored<T> = Omit<T, 'permissions'> & { permissions: string };
const parsePerms = <T extends { permissions: DataAction[] }>(r: Stored<T>): T => ({ ...r, permissions: JSON.parse(r.permissions) as DataAction[] }) as unknown as T;

/** One row of the per-token policy read: a role of one of the token's teams and, when it has any, one grant. */
export interface PolicyRow {
  role_id: string;
  role_name: string;
  team_name: string;
  database_pattern: string;
  role_permissions: string;
  measurement_pattern: string | null;
  grant_permissions: string | null;
}

/** SQL of the RBAC tables. */
export class RbacStore {
  constructor(private readonly db: CatalogDb) {}

  insertOrganization(o: Organization): void {
    this.db.prepare('INSERT INTO rbac_organizations (id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?)').run(o.id, o.name, o.description, o.created_at, o.updated_at);
  }
  organizations(): Organization[] {
    return this.db.query<Organization, []>('SELECT * FROM rbac_organizations ORDER BY created_at, id').all();
  }
  organization(id: string): Organization | null {
    return this.db.query<Organization, [string]>('SELECT * FROM rbac_organizations WHERE id = ?').get(id);
  }
  updateOrganization(o: Organization): void {
    this.db.prepare('UPDATE rbac_organizations SET name = ?, description = ?, updated_at = ? WHERE id = ?').run(o.name, o.description, o.updated_at, o.id);
  }
  deleteOrganization(id: string): void {
    this.db.prepare('DELETE FROM rbac_organizations WHERE id = ?').run(id);
  }

  insertTeam(t: Team): void {
    this.db.prepare('INSERT INTO rbac_teams (id, org_id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)').run(t.id, t.org_id, t.name, t.description, t.created_at, t.updated_at);
  }
  teams(orgId: string): Team[] {
    return this.db.query<Team, [string]>('SELECT * FROM rbac_teams WHERE org_id = ? ORDER BY created_at, id').all(orgId);
  }
  team(id: string): Team | null {
    return this.db.query<Team, [string]>('SELECT * FROM rbac_teams WHERE id = ?').get(id);
  }
  updateTeam(t: Team): void {
    this.db.prepare('UPDATE rbac_teams SET name = ?, description = ?, updated_at = ? WHERE id = ?').run(t.name, t.description, t.updated_at, t.id);
  }
  deleteTeam(id: string): void {
    this.db.prepare('DELETE FROM rbac_teams WHERE id = ?').run(id);
  }

  /** Adds a member; false when it already was one. */
  addMember(teamId: string, tokenId: string, at: string): boolean {
    // A key derived from the pair: two nodes adding the same member write the same row.
    return this.db.prepare('INSERT OR IGNORE INTO rbac_members (id, team_id, token_id, created_at) VALUES (?, ?, ?, ?)').run(`${teamId}:${tokenId}`, teamId, tokenId, at).changes === 1;
  }
  members(teamId: string): Member[] {
    return this.db
      .query<Member, [string]>('SELECT m.team_id, m.token_id, t.name AS token_name, m.created_at FROM rbac_members m JOIN tokens t ON t.id = m.token_id WHERE m.team_id = ? ORDER BY m.created_at, m.token_id')
      .all(teamId);
  }
  /** Removes a member; false when it was none. */
  removeMember(teamId: string, tokenId: string): boolean {
    return this.db.prepare('DELETE FROM rbac_members WHERE team_id = ? AND token_id = ?').run(teamId, tokenId).changes === 1;
  }
  /** Teams the token belongs to. */
  teamsOfToken(tokenId: string): Team[] {
    return this.db.query<Team, [string]>('SELECT t.* FROM rbac_teams t JOIN rbac_members m ON m.team_id = t.id WHERE m.token_id = ? ORDER BY t.created_at, t.id').all(tokenId);
  }

  insertRole(r: Role): void {
    this.db
      .prepare('INSERT INTO rbac_roles (id, team_id, name, database_pattern, permissions, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(r.id, r.team_id, r.name, r.database_pattern, JSON.stringify(r.permissions), r.created_at, r.updated_at);
  }
  roles(teamId: string): Role[] {
    return this.db.query<Stored<Role>, [string]>('SELECT * FROM rbac_roles WHERE team_id = ? ORDER BY created_at, id').all(teamId).map(parsePerms<Role>);
  }
  role(id: string): Role | null {
    const r = this.db.query<Stored<Role>, [string]>('SELECT * FROM rbac_roles WHERE id = ?').get(id);
    return r ? parsePerms<Role>(r) : null;
  }
  updateRole(r: Role): void {
    this.db.prepare('UPDATE rbac_roles SET name = ?, database_pattern = ?, permissions = ?, updated_at = ? WHERE id = ?').run(r.name, r.database_pattern, JSON.stringify(r.permissions), r.updated_at, r.id);
  }
  deleteRole(id: string): void {
    this.db.prepare('DELETE FROM rbac_roles WHERE id = ?').run(id);
  }

  insertGrant(g: MeasurementGrant): void {
    this.db
      .prepare('INSERT INTO rbac_measurement_grants (id, role_id, measurement_pattern, permissions, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(g.id, g.role_id, g.measurement_pattern, JSON.stringify(g.permissions), g.created_at, g.updated_at);
  }
  /**
   * A role's grants in pattern order: one order on every node and after a restore. Creation order is not
   * one (created_at has millisecond precision and ids are random), and a role's grants add up in any order.
   */
  grants(roleId: string): MeasurementGrant[] {
    return this.db
      .query<Stored<MeasurementGrant>, [string]>('SELECT * FROM rbac_measurement_grants WHERE role_id = ? ORDER BY measurement_pattern, created_at, id')
      .all(roleId)
      .map(parsePerms<MeasurementGrant>);
  }
  grant(id: string): MeasurementGrant | null {
    const g = this.db.query<Stored<MeasurementGrant>, [string]>('SELECT * FROM rbac_measurement_grants WHERE id = ?').get(id);
    return g ? parsePerms<MeasurementGrant>(g) : null;
  }
  updateGrant(g: MeasurementGrant): void {
    this.db.prepare('UPDATE rbac_measurement_grants SET measurement_pattern = ?, permissions = ?, updated_at = ? WHERE id = ?').run(g.measurement_pattern, JSON.stringify(g.permissions), g.updated_at, g.id);
  }
  deleteGrant(id: string): void {
    this.db.prepare('DELETE FROM rbac_measurement_grants WHERE id = ?').run(id);
  }

  /** Whether the token is in any team, and every (role, grant) pair of its teams' roles, in one read (grants in the order of `grants`). */
  policyRows(tokenId: string): { member: boolean; rows: PolicyRow[] } {
    const member = this.db.query<{ n: number }, [string]>('SELECT count(*) AS n FROM rbac_members WHERE token_id = ?').get(tokenId)!.n > 0;
    if (!member) return { member, rows: [] };
    const rows = this.db
      .query<PolicyRow, [string]>(
        `SELECT r.id AS role_id, r.name AS role_name, t.name AS team_name, r.database_pattern, r.permissions AS role_permissions,
                g.measurement_pattern, g.permissions AS grant_permissions
         FROM rbac_members m JOIN rbac_teams t ON t.id = m.team_id JOIN rbac_roles r ON r.team_id = m.team_id
         LEFT JOIN rbac_measurement_grants g ON g.role_id = r.id
         WHERE m.token_id = ? ORDER BY r.created_at, r.id, g.measurement_pattern, g.created_at, g.id`,
      )
      .all(tokenId);
    return { member, rows };
  }
}

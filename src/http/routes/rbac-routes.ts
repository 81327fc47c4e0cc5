import { Hono, type Context } from 'hono';
import {
  checkQuery,
  grantBody,
  grantPatch,
  memberBody,
  organizationBody,
  organizationPatch,
  roleBody,
  rolePatch,
  teamBody,
  teamPatch,
  type Authorizer,
  type RbacService,
} from '../../auth/index.ts';
import { notFound } from '../../lib/errors.ts';
import { readJson, readQuery } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';

const list = <K extends string, T>(c: Context<AppEnv>, key: K, items: T[]) => c.json({ [key]: items, count: items.length } as Record<K, T[]> & { count: number });
const deleted = (c: Context<AppEnv>, what: string, id: string) => c.json({ message: `${what} ${id} deleted`, id });

/**
 * /api/v1/rbac (admin only): organizations, teams, members, roles, measurement permissions, and two
 * explain routes. Shapes: README, "RBAC". Created records answer 201 with their id; unknown ids 404.
 */
export function rbacRoutes(rbac: RbacService, authorizer: Authorizer) {
  const app = new Hono<AppEnv>();
  app.use('*', requireAdmin);

  app.post('/organizations', async (c) => c.json(rbac.createOrganization(await readJson(c, organizationBody)), 201));
  app.get('/organizations', (c) => list(c, 'organizations', rbac.organizations()));
  app.get('/organizations/:org_id', (c) => c.json(rbac.organization(c.req.param('org_id'))));
  app.patch('/organizations/:org_id', async (c) => c.json(rbac.updateOrganization(c.req.param('org_id'), await readJson(c, organizationPatch))));
  app.delete('/organizations/:org_id', (c) => (rbac.deleteOrganization(c.req.param('org_id')), deleted(c, 'organization', c.req.param('org_id'))));

  app.post('/organizations/:org_id/teams', async (c) => c.json(rbac.createTeam(c.req.param('org_id'), await readJson(c, teamBody)), 201));
  app.get('/organizations/:org_id/teams', (c) => list(c, 'teams', rbac.teams(c.req.param('org_id'))));
  app.get('/teams/:team_id', (c) => c.json(rbac.team(c.req.param('team_id'))));
  app.patch('/teams/:team_id', async (c) => c.json(rbac.updateTeam(c.req.param('team_id'), await readJson(c, teamPatch))));
  app.delete('/teams/:team_id', (c) => (rbac.deleteTeam(c.req.param('team_id')), deleted(c, 'team', c.req.param('team_id'))));

  app.post('/teams/:team_id/members', async (c) => c.json(rbac.addMember(c.req.param('team_id'), (await readJson(c, memberBody)).token_id), 201));
  app.get('/teams/:team_id/members', (c) => list(c, 'members', rbac.members(c.req.param('team_id'))));
  app.delete('/teams/:team_id/members/:token_id', (c) => {
    rbac.removeMember(c.req.param('team_id'), c.req.param('token_id'));
    return c.json({ message: `token ${c.req.param('token_id')} removed from team ${c.req.param('team_id')}`, team_id: c.req.param('team_id'), token_id: c.req.param('token_id') });
  });

  app.post('/teams/:team_id/roles', async (c) => c.json(rbac.createRole(c.req.param('team_id'), await readJson(c, roleBody)), 201));
  app.get('/teams/:team_id/roles', (c) => list(c, 'roles', rbac.roles(c.req.param('team_id'))));
  app.get('/roles/:role_id', (c) => c.json(rbac.role(c.req.param('role_id'))));
  app.patch('/roles/:role_id', async (c) => c.json(rbac.updateRole(c.req.param('role_id'), await readJson(c, rolePatch))));
  app.delete('/roles/:role_id', (c) => (rbac.deleteRole(c.req.param('role_id')), deleted(c, 'role', c.req.param('role_id'))));

  app.post('/roles/:role_id/measurements', async (c) => c.json(rbac.createGrant(c.req.param('role_id'), await readJson(c, grantBody)), 201));
  app.get('/roles/:role_id/measurements', (c) => list(c, 'measurements', rbac.grants(c.req.param('role_id'))));
  app.patch('/roles/:role_id/measurements/:id', async (c) => c.json(rbac.updateGrant(c.req.param('role_id'), c.req.param('id'), await readJson(c, grantPatch))));
  app.delete('/roles/:role_id/measurements/:id', (c) => (rbac.deleteGrant(c.req.param('role_id'), c.req.param('id')), deleted(c, 'measurement permission', c.req.param('id'))));

  app.get('/tokens/:token_id/effective', (c) => c.json(rbac.effective(c.req.param('token_id'))));
  app.get('/check', (c) => {
    const q = readQuery(c, checkQuery);
    const decision = authorizer.explain(q.token_id, q.action, q.database, q.measurement);
    if (!decision) throw notFound(`token '${q.token_id}' not found`);
    return c.json(decision);
  });
  return app;
}

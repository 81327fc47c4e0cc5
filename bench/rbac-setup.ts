/**
 * The RBAC benchmarks' policy: a token in 3 teams with 20 roles, each with 3 measurement permissions;
 * role i covers databases `d<i>_*`, except the last, which covers `ben*` and, through its last
 * permission, `cp*`: the allowing role and permission are the last ones looked at (the worst case).
 */
import { ADMIN_TOKEN, type TestServer } from '../tests/helpers/server.ts';

export const TEAMS = 3;
export const ROLES = 20;
export const GRANTS = 3;

/** Role `i` of the policy. */
export function roleSpec(i: number) {
  const last = i === ROLES - 1;
  return {
    name: `role-${i}`,
    database_pattern: last ? 'ben*' : `d${i}_*`,
    permissions: ['read', 'write'] as ('read' | 'write')[],
    grants: Array.from({ length: GRANTS }, (_, g) => (last && g === GRANTS - 1 ? 'cp*' : `m${g}_*`)),
  };
}

async function post(s: TestServer, path: string, body: unknown): Promise<{ id: string; token: string }> {
  const res = await s.fetch(path, { method: 'POST', token: ADMIN_TOKEN, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<{ id: string; token: string }>;
}

/** Creates an ordinary token (read, write) named `name` and, through the API, puts it under the policy; returns its secret. */
export async function narrowedToken(s: TestServer, name: string): Promise<string> {
  const token = await post(s, '/api/v1/auth/tokens', { name, permissions: ['read', 'write'] });
  const org = await post(s, '/api/v1/rbac/organizations', { name: `${name}-org` });
  const teams: { id: string }[] = [];
  for (let t = 0; t < TEAMS; t++) teams.push(await post(s, `/api/v1/rbac/organizations/${org.id}/teams`, { name: `t${t}` }));
  for (const t of teams) await post(s, `/api/v1/rbac/teams/${t.id}/members`, { token_id: token.id });
  for (let i = 0; i < ROLES; i++) {
    const spec = roleSpec(i);
    const role = await post(s, `/api/v1/rbac/teams/${teams[i % TEAMS]!.id}/roles`, { name: spec.name, database_pattern: spec.database_pattern, permissions: spec.permissions });
    for (const g of spec.grants) await post(s, `/api/v1/rbac/roles/${role.id}/measurements`, { measurement_pattern: g, permissions: spec.permissions });
  }
  return token.token;
}

/** Creates an ordinary token (read, write) in no team; returns its secret. */
export async function plainToken(s: TestServer, name: string): Promise<string> {
  return (await post(s, '/api/v1/auth/tokens', { name, permissions: ['read', 'write'] })).token;
}

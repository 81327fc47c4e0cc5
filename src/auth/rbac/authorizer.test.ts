import { describe, expect, test } from 'bun:test';
import { migrations, openCatalog } from '../../catalog/index.ts';
import { UNRESTRICTED } from '../../lib/table-access.ts';
import { TokenService } from '../token-service.ts';
import { TokenStore } from '../token-store.ts';
import { createRbac } from './create-rbac.ts';

/** A real in-memory metadata database with one ordinary token in one team with one role. */
function setup(enabled = true) {
  const db = openCatalog(':memory:', migrations);
  const tokenStore = new TokenStore(db);
  const tokens = new TokenService(tokenStore, { cacheTtlSec: 30, maxCacheSize: 10 });
  const { authorizer, rbac } = createRbac(db, tokenStore, enabled, ['agent_memory']);
  const { record } = tokens.create({ name: 't', permissions: ['read', 'write'] });
  const org = rbac.createOrganization({ name: 'o', description: '' });
  const team = rbac.createTeam(org.id, { name: 'team', description: '' });
  rbac.addMember(team.id, record.id);
  const role = rbac.createRole(team.id, { name: 'r', database_pattern: 'db1', permissions: ['read'] });
  const principal = { tokenId: record.id, name: record.name, isAdmin: false, permissions: record.permissions, isService: false };
  return { db, tokens, authorizer, rbac, record, team, role, principal };
}

describe('authorizer', () => {
  test('admins and auth-off callers are unrestricted', () => {
    const { authorizer, principal } = setup();
    expect(authorizer.accessFor(null)).toBe(UNRESTRICTED);
    expect(authorizer.accessFor({ ...principal, isAdmin: true })).toBe(UNRESTRICTED);
  });

  test('every change applies to the next access built, though policies are cached', () => {
    const { authorizer, rbac, principal, role, team, record } = setup();
    expect(authorizer.accessFor(principal).allows('read', 'db1', 'cpu')).toBe(true);
    rbac.updateRole(role.id, { database_pattern: 'db2' });
    expect(authorizer.accessFor(principal).allows('read', 'db1', 'cpu')).toBe(false);
    rbac.updateRole(role.id, { database_pattern: 'db*' });
    const grant = rbac.createGrant(role.id, { measurement_pattern: 'mem', permissions: ['read'] });
    expect(authorizer.accessFor(principal).allows('read', 'db1', 'cpu')).toBe(false);
    rbac.deleteGrant(role.id, grant.id);
    expect(authorizer.accessFor(principal).allows('read', 'db1', 'cpu')).toBe(true);
    rbac.removeMember(team.id, record.id);
    expect(authorizer.accessFor(principal).allows('write', 'db9', 'x')).toBe(true);
  });

  test('rbac.enabled = false leaves the own permissions only', () => {
    const { authorizer, principal } = setup(false);
    expect(authorizer.accessFor(principal).allows('write', 'db9', 'x')).toBe(true);
    expect(authorizer.accessFor(principal).allows('delete', 'db9', 'x')).toBe(false);
  });

  test('owners: a revoked or deleted token may do nothing, and deleting a token removes its memberships', () => {
    const { authorizer, tokens, rbac, record, team } = setup();
    expect(authorizer.accessForToken(record.id).allows('read', 'db1', 'cpu')).toBe(true);
    tokens.revoke(record.id);
    expect(authorizer.accessForToken(record.id).allows('read', 'db1', 'cpu')).toBe(false);
    tokens.delete(record.id);
    expect(authorizer.accessForToken(record.id).allowsDatabase('read', 'db1')).toBe(false);
    expect(rbac.members(team.id)).toEqual([]);
  });

  test('system databases: walled off from ordinary tokens, the only place a service token reaches, open to admins', () => {
    const { authorizer, tokens, principal } = setup();
    const ordinary = authorizer.accessFor({ ...principal, permissions: ['read', 'write', 'delete'] });
    for (const db of ['agent_memory', 'Agent_Memory']) {
      expect(ordinary.allows('read', db, 'memories')).toBe(false);
      expect(ordinary.allowsDatabase('write', db)).toBe(false);
    }
    expect(ordinary.ownsSystemDatabase('agent_memory')).toBe(false);
    expect(authorizer.accessFor({ ...principal, isAdmin: true }).allows('read', 'agent_memory', 'memories')).toBe(true);
    tokens.issueServiceToken('memory-service', 'test', ['read', 'write', 'delete']);
    const service = tokens.list().find((t) => t.name === 'memory-service')!;
    expect(service.isService).toBe(true);
    const access = authorizer.accessForToken(service.id);
    expect(access.allows('write', 'agent_memory', 'memories')).toBe(true);
    expect(access.ownsSystemDatabase('agent_memory')).toBe(true);
    expect(access.allows('read', 'db1', 'cpu')).toBe(false);
    expect(access.allowsDatabase('read', 'db1')).toBe(false);
    expect(authorizer.explain(service.id, 'read', 'db1', 'cpu')).toMatchObject({ allowed: false });
    expect(authorizer.explain(service.id, 'read', 'agent_memory', 'memories')).toMatchObject({ allowed: true });
  });
});

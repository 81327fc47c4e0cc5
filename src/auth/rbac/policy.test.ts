import { describe, expect, test } from 'bun:test';
import { compilePattern, patternProblem } from './pattern.ts';
import { compilePolicy, ownActions, PolicyAccess } from './policy.ts';
import type { PolicyRow } from './rbac-store.ts';

const row = (role: string, db: string, perms: string[], m: string | null = null, mPerms: string[] | null = null): PolicyRow => ({
  role_id: role,
  role_name: role,
  team_name: 'team',
  database_pattern: db,
  role_permissions: JSON.stringify(perms),
  measurement_pattern: m,
  grant_permissions: mPerms && JSON.stringify(mPerms),
});

describe('patterns', () => {
  test('only name characters and *', () => {
    for (const ok of ['db1', '*', 'cpu*', '*_hot', 'a*b*c', 'x-y_z']) expect(patternProblem(ok)).toBeNull();
    for (const bad of ['', 'a?', 'a.b', '[ab]', 'a b', '.*', 'a/b', 'x'.repeat(129)]) expect(patternProblem(bad)).not.toBeNull();
  });
  test('* matches any run of characters, anchored, case-sensitive', () => {
    const m = compilePattern('cpu*');
    expect([m('cpu'), m('cpu_hot'), m('xcpu'), m('CPU')]).toEqual([true, true, false, false]);
    expect(compilePattern('a*b')('a-x-b')).toBe(true);
    expect(compilePattern('a*b')('a-x-bc')).toBe(false);
    expect(compilePattern('*')('anything')).toBe(true);
  });
});

describe('roles narrow, never widen', () => {
  const policy = compilePolicy(true, [row('r1', 'db1', ['read', 'write'], 'cpu*', ['read', 'write']), row('r1', 'db1', ['read', 'write'], 'mem', ['read']), row('r2', 'logs*', ['read'])]);
  const access = new PolicyAccess(ownActions(['read', 'write', 'delete']), policy);
  test('a role matches the database and the action, then its measurement permissions decide', () => {
    expect(access.allows('read', 'db1', 'cpu_a')).toBe(true);
    expect(access.allows('write', 'db1', 'mem')).toBe(false);
    expect(access.allows('read', 'db1', 'disk')).toBe(false);
    expect(access.allows('read', 'logs_x', 'anything')).toBe(true);
    expect(access.allows('write', 'logs_x', 'anything')).toBe(false);
    expect(access.allows('delete', 'db1', 'cpu')).toBe(false);
    expect(access.allowsDatabase('read', 'db1')).toBe(true);
    expect(access.allowsDatabase('read', 'db2')).toBe(false);
  });
  test("the token's own list bounds every role", () => {
    const readOnly = new PolicyAccess(ownActions(['read']), policy);
    expect(readOnly.allows('write', 'db1', 'cpu')).toBe(false);
    expect(readOnly.explain('write', 'db1', 'cpu').reason).toMatch(/own permissions/);
  });
  test('no team: own permissions alone (an empty list is read and write)', () => {
    const alone = new PolicyAccess(ownActions([]), compilePolicy(false, []));
    expect([alone.allows('read', 'x', 'y'), alone.allows('write', 'x', 'y'), alone.allows('delete', 'x', 'y')]).toEqual([true, true, false]);
  });
  test('a member of teams without roles may do nothing', () => {
    const none = new PolicyAccess(ownActions([]), compilePolicy(true, []));
    expect(none.allows('read', 'db1', 'cpu')).toBe(false);
    expect(none.explain('read', 'db1', 'cpu')).toEqual({ allowed: false, reason: 'no role of the token\'s teams allows read on db1.cpu' });
  });
});

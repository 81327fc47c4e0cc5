/**
 * RBAC end to end (issue 23): the admin routes, and a matrix of patterns x actions x every route that
 * touches data, hostile SQL shapes, listings, immediate effect of changes, owners of continuous queries
 * and retention policies, and backup/restore of the RBAC tables. One real server; nothing mocked.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { pack, unpack } from 'msgpackr';
import { ADMIN_TOKEN, json, startServer, type TestServer } from './helpers/server.ts';
import { HIDDEN_ERROR } from '../src/lib/table-access.ts';
import { flush, waitFor, waitForJobs } from './compaction-helpers.ts';

let s: TestServer;
const T_NS = 1_700_000_000_000_000_000n;
const T_MS = 1_700_000_000_000;

/** A token created by the admin: its id and secret. */
async function token(name: string, body: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
  const r = await json(s, 'POST', '/api/v1/auth/tokens', { name, ...body });
  expect(r.status).toBe(201);
  return { id: r.body.id, secret: r.body.token };
}

/** POSTs an RBAC record as the admin; 201 and its id. */
async function create(path: string, body: Record<string, unknown>): Promise<string> {
  const r = await json(s, 'POST', `/api/v1/rbac${path}`, body);
  expect(r.status).toBe(201);
  expect(typeof r.body.id === 'string' || typeof r.body.token_id === 'string').toBe(true);
  return r.body.id ?? r.body.token_id;
}

const lp = (m: string, v = 1) => `${m} value=${v} ${T_NS}\n`;

let narrow: { id: string; secret: string };
let plain: { id: string; secret: string };
let org: string;
let team: string;
let roleDb1: string;

/** The narrow token's rights, as the roles below grant them (the oracle of the matrix). */
function expected(action: 'read' | 'write', db: string, m: string): boolean {
  if (action === 'write') return db === 'db1' && m.startsWith('cpu');
  return (db === 'db1' && (m.startsWith('cpu') || m === 'mem')) || db.startsWith('logs');
}

const TARGETS: [string, string][] = [
  ['db1', 'cpu'],
  ['db1', 'cpu_hot'],
  ['db1', 'mem'],
  ['db1', 'disk'],
  ['db2', 'cpu'],
  ['logs_a', 'app'],
  ['other', 'cpu'],
];

beforeAll(async () => {
  s = await startServer({ env: { SVC_MQTT_ENABLED: 'false', SVC_DELETE_ENABLED: 'true', SVC_TIERING_ENABLED: 'true' } });
  for (const [db, m] of TARGETS) expect((await s.fetch(`/write?db=${db}`, { method: 'POST', body: lp(m) })).status).toBe(204);
  narrow = await token('narrow', { permissions: ['read', 'write', 'delete'] });
  plain = await token('plain');
  org = await create('/organizations', { name: 'acme', description: 'test org' });
  team = await create(`/organizations/${org}/teams`, { name: 'ops' });
  // A second team of another organization: rights of all a token's teams add up (still within its own list).
  const org2 = await create('/organizations', { name: 'other-org' });
  const team2 = await create(`/organizations/${org2}/teams`, { name: 'readers' });
  roleDb1 = await create(`/teams/${team}/roles`, { name: 'db1-cpu', database_pattern: 'db1', permissions: ['read', 'write'] });
  await create(`/roles/${roleDb1}/measurements`, { measurement_pattern: 'cpu*', permissions: ['read', 'write'] });
  await create(`/roles/${roleDb1}/measurements`, { measurement_pattern: 'mem', permissions: ['read'] });
  await create(`/teams/${team2}/roles`, { name: 'logs', database_pattern: 'logs*', permissions: ['read'] });
  await create(`/teams/${team}/members`, { token_id: narrow.id });
  await create(`/teams/${team2}/members`, { token_id: narrow.id });
});
afterAll(async () => {
  await s?.cleanup();
});

describe('admin routes', () => {
  test('are admin only: 401 without a token, 403 for an ordinary one', async () => {
    expect((await json(s, 'GET', '/api/v1/rbac/organizations', undefined, null)).status).toBe(401);
    expect((await json(s, 'GET', '/api/v1/rbac/organizations', undefined, plain.secret)).status).toBe(403);
    expect((await json(s, 'POST', '/api/v1/rbac/organizations', { name: 'x' }, narrow.secret)).status).toBe(403);
  });

  test('validate patterns, permissions and fields; unknown ids are 404', async () => {
    for (const bad of ['db?', 'db[12]', '.*', 'a.b', 'x y', '']) {
      const r = await json(s, 'POST', `/api/v1/rbac/teams/${team}/roles`, { name: `bad-${bad}`, database_pattern: bad, permissions: ['read'] });
      expect(r.status).toBe(400);
    }
    expect((await json(s, 'POST', `/api/v1/rbac/teams/${team}/roles`, { name: 'p', database_pattern: 'db', permissions: ['admin'] })).body.error).toMatch(/unknown permission 'admin'/);
    expect((await json(s, 'POST', `/api/v1/rbac/teams/${team}/roles`, { name: 'p', database_pattern: 'db', permissions: [] })).status).toBe(400);
    expect((await json(s, 'POST', `/api/v1/rbac/roles/${roleDb1}/measurements`, { measurement_pattern: 'cpu%', permissions: ['read'] })).status).toBe(400);
    expect((await json(s, 'POST', '/api/v1/rbac/organizations', { name: 'x', extra: 1 })).body.error).toMatch(/unknown field/);
    expect((await json(s, 'POST', '/api/v1/rbac/organizations', { name: 'acme' })).status).toBe(409);
    expect((await json(s, 'GET', '/api/v1/rbac/organizations/nope')).status).toBe(404);
    expect((await json(s, 'GET', '/api/v1/rbac/teams/nope')).status).toBe(404);
    expect((await json(s, 'GET', '/api/v1/rbac/roles/nope')).status).toBe(404);
    expect((await json(s, 'PATCH', `/api/v1/rbac/roles/${roleDb1}/measurements/nope`, { permissions: ['read'] })).status).toBe(404);
    expect((await json(s, 'POST', `/api/v1/rbac/teams/${team}/members`, { token_id: 'nope' })).status).toBe(404);
    expect((await json(s, 'DELETE', `/api/v1/rbac/teams/${team}/members/nope`)).status).toBe(404);
    expect((await json(s, 'GET', '/api/v1/rbac/tokens/nope/effective')).status).toBe(404);
  });

  test('list, get and patch records', async () => {
    const orgs = await json(s, 'GET', '/api/v1/rbac/organizations');
    expect(orgs.body.count).toBe(2);
    expect(orgs.body.organizations[0]).toMatchObject({ id: org, name: 'acme', description: 'test org' });
    expect((await json(s, 'PATCH', `/api/v1/rbac/organizations/${org}`, { description: 'renamed' })).body).toMatchObject({ name: 'acme', description: 'renamed' });
    expect((await json(s, 'GET', `/api/v1/rbac/organizations/${org}/teams`)).body.teams.map((t: { name: string }) => t.name)).toEqual(['ops']);
    expect((await json(s, 'GET', `/api/v1/rbac/teams/${team}/members`)).body.members).toEqual([expect.objectContaining({ token_id: narrow.id, token_name: 'narrow' })]);
    const grants = (await json(s, 'GET', `/api/v1/rbac/roles/${roleDb1}/measurements`)).body;
    expect(grants.measurements.map((g: { measurement_pattern: string }) => g.measurement_pattern)).toEqual(['cpu*', 'mem']);
    // Grants are listed in pattern order, whatever order (or millisecond) they were created in.
    const role = await create(`/teams/${team}/roles`, { name: 'order', database_pattern: 'nothing_here', permissions: ['read'] });
    for (const p of ['zz*', 'aa', 'mm']) await create(`/roles/${role}/measurements`, { measurement_pattern: p, permissions: ['read'] });
    expect((await json(s, 'GET', `/api/v1/rbac/roles/${role}/measurements`)).body.measurements.map((g: { measurement_pattern: string }) => g.measurement_pattern)).toEqual(['aa', 'mm', 'zz*']);
    expect((await json(s, 'DELETE', `/api/v1/rbac/roles/${role}`)).status).toBe(200);
    expect((await json(s, 'GET', `/api/v1/rbac/roles/${roleDb1}`)).body).toMatchObject({ team_id: team, database_pattern: 'db1', permissions: ['read', 'write'] });
  });

  test('effective and check explain a token', async () => {
    const eff = (await json(s, 'GET', `/api/v1/rbac/tokens/${narrow.id}/effective`)).body;
    expect(eff).toMatchObject({ token_id: narrow.id, narrowed_by_roles: true });
    expect(eff.teams.map((t: { name: string }) => t.name).sort()).toEqual(['ops', 'readers']);
    const ops = eff.teams.find((t: { name: string }) => t.name === 'ops');
    expect(ops.roles[0].measurements).toHaveLength(2);
    const check = (q: string) => json(s, 'GET', `/api/v1/rbac/check?${q}`);
    expect((await check(`token_id=${narrow.id}&database=db1&measurement=cpu_x&action=write`)).body).toEqual({ allowed: true, reason: expect.stringMatching(/db1-cpu.*cpu\*/) });
    expect((await check(`token_id=${narrow.id}&database=db1&measurement=mem&action=write`)).body).toMatchObject({ allowed: false });
    expect((await check(`token_id=${narrow.id}&database=logs_z&measurement=q&action=read`)).body.allowed).toBe(true);
    expect((await check(`token_id=${plain.id}&database=db1&measurement=cpu&action=delete`)).body).toMatchObject({ allowed: false, reason: expect.stringMatching(/own permissions/) });
    expect((await check(`token_id=${narrow.id}&database=db1&measurement=cpu&action=drop`)).status).toBe(400);
    expect((await check(`token_id=nope&database=db1&measurement=cpu&action=read`)).status).toBe(404);
  });
});

/** Every route that reads a measurement, as (token, db, m) -> response. */
const READ_ROUTES: [string, (tok: string, db: string, m: string) => Promise<Response>][] = [
  ['POST /api/v1/query', (tok, db, m) => s.fetch('/api/v1/query', { method: 'POST', token: tok, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: `SELECT * FROM ${db}.${m}` }) })],
  ['POST /api/v1/query/arrow', (tok, db, m) => s.fetch('/api/v1/query/arrow', { method: 'POST', token: tok, headers: { 'content-type': 'application/json', 'x-svc-database': db }, body: JSON.stringify({ sql: `SELECT * FROM ${m}` }) })],
  ['POST /api/v1/query/msgpack', (tok, db, m) => s.fetch('/api/v1/query/msgpack', { method: 'POST', token: tok, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: `SELECT count(*) FROM "${db}"."${m}"` }) })],
  ['POST /api/v1/query/estimate', (tok, db, m) => s.fetch('/api/v1/query/estimate', { method: 'POST', token: tok, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: `SELECT * FROM ${db}.${m}` }) })],
  ['GET /api/v1/query/:measurement', (tok, db, m) => s.fetch(`/api/v1/query/${m}?database=${db}`, { token: tok })],
  ['DESCRIBE', (tok, db, m) => s.fetch('/api/v1/query', { method: 'POST', token: tok, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: `DESCRIBE ${db}.${m}` }) })],
];

/** Every route that writes a measurement. */
const WRITE_ROUTES: [string, (tok: string, db: string, m: string) => Promise<Response>][] = [
  ['POST /api/v1/write/msgpack', (tok, db, m) => s.fetch('/api/v1/write/msgpack', { method: 'POST', token: tok, headers: { 'x-svc-database': db }, body: pack({ m, columns: { time: [T_MS], value: [2.5] } }) })],
  ['POST /write', (tok, db, m) => s.fetch(`/write?db=${db}`, { method: 'POST', token: tok, body: lp(m, 2) })],
  ['POST /api/v2/write', (tok, db, m) => s.fetch(`/api/v2/write?bucket=${db}`, { method: 'POST', token: tok, body: lp(m, 2) })],
  ['POST /api/v1/write/line-protocol', (tok, db, m) => s.fetch('/api/v1/write/line-protocol', { method: 'POST', token: tok, headers: { 'x-svc-database': db }, body: lp(m, 2) })],
  ['POST /api/v1/import/lp', (tok, db, m) => s.fetch(`/api/v1/import/lp?db=${db}`, { method: 'POST', token: tok, body: lp(m, 2) })],
  ['POST /api/v1/import/csv', (tok, db, m) => s.fetch(`/api/v1/import/csv?db=${db}&measurement=${m}`, { method: 'POST', token: tok, headers: { 'content-type': 'text/csv' }, body: `time,value\n${T_MS},2\n` })],
];

/**
 * TLE rows go to measurements of their own (`<m>_tle`): mixed with the line-protocol rows of one
 * measurement they trip an engine failure outside RBAC (intermittent "Out of memory" on later queries).
 */
const tleWrite = (tok: string, db: string, m: string) => s.fetch(`/api/v1/write/tle?db=${db}&measurement=${m}_tle`, { method: 'POST', token: tok, body: TLE });

const TLE = `ISS (ZARYA)
1 25544U 98067A   08264.51782528 -.00002182  00000-0 -11606-4 0  2927
2 25544  51.6416 247.4627 0006703 130.5360 325.0288 15.72125391563537
`;

async function expectDecision(res: Response, allowed: boolean, action: string, db: string, m: string, label: string) {
  const text = await res.text();
  const got = res.status === 403 ? 'forbidden' : res.status < 300 ? 'allowed' : `status ${res.status}: ${text.slice(0, 200)}`;
  expect(`${label} ${action} ${db}.${m}: ${got}`).toBe(`${label} ${action} ${db}.${m}: ${allowed ? 'allowed' : 'forbidden'}`);
  if (!allowed) expect(JSON.parse(text)).toEqual({ error: `token may not ${action} ${db}.${m}`, action, database: db, measurement: m });
}

describe('the matrix: patterns x actions x routes', () => {
  test('reads on every read route follow the roles (and a token in no team keeps its own rights)', async () => {
    for (const [label, route] of READ_ROUTES)
      for (const [db, m] of TARGETS) {
        await expectDecision(await route(narrow.secret, db, m), expected('read', db, m), 'read', db, m, label);
        await expectDecision(await route(plain.secret, db, m), true, 'read', db, m, label);
      }
  });

  test('writes on every write route follow the roles, and a refused write stores nothing', async () => {
    const count = async (db: string, m: string) => (await json(s, 'POST', '/api/v1/query', { sql: `SELECT count(*) AS n FROM ${db}.${m}` })).body.data[0][0];
    for (const [label, route] of WRITE_ROUTES)
      for (const [db, m] of TARGETS) {
        const before = await count(db, m);
        const allowed = expected('write', db, m);
        await expectDecision(await route(narrow.secret, db, m), allowed, 'write', db, m, label);
        if (!allowed) expect(await count(db, m)).toBe(before);
      }
  });

  test('TLE writes follow the roles', async () => {
    for (const [db, m] of TARGETS) await expectDecision(await tleWrite(narrow.secret, db, m), expected('write', db, `${m}_tle`), 'write', db, `${m}_tle`, 'POST /api/v1/write/tle');
  });

  test('a batch touching one forbidden measurement is refused whole, naming it', async () => {
    const before = (await json(s, 'POST', '/api/v1/query', { sql: 'SELECT count(*) FROM db1.cpu' })).body.data[0][0];
    for (const body of [lp('cpu', 7) + lp('disk', 7), lp('cpu', 7) + 'not a line\n' + lp('mem', 7)]) {
      const res = await s.fetch('/write?db=db1', { method: 'POST', token: narrow.secret, body });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { measurement: string }).measurement).toMatch(/^(disk|mem)$/);
    }
    const mixed = pack([{ m: 'cpu', columns: { time: [T_MS], value: [1] } }, { m: 'mem', columns: { time: [T_MS], value: [1] } }]);
    expect((await s.fetch('/api/v1/write/msgpack', { method: 'POST', token: narrow.secret, headers: { 'x-svc-database': 'db1' }, body: mixed })).status).toBe(403);
    const imported = await s.fetch('/api/v1/import/lp?db=db1', { method: 'POST', token: narrow.secret, body: lp('cpu', 9) + lp('disk', 9) });
    expect(imported.status).toBe(403);
    expect((await json(s, 'POST', '/api/v1/query', { sql: 'SELECT count(*) FROM db1.cpu' })).body.data[0][0]).toBe(before);
  });

  test('delete needs the delete action on the measurement (and the route stays admin only)', async () => {
    const del = { database: 'db1', measurement: 'cpu', where: "time < '2000-01-01'", confirm: true };
    expect((await json(s, 'POST', '/api/v1/delete', del, narrow.secret)).status).toBe(403);
    expect((await json(s, 'POST', '/api/v1/delete', del)).status).toBe(200);
  });
});

/** [label, sql, expected status, the measurement a 403 names]; bare names resolve in db1. */
const HOSTILE: [string, string, number, string?][] = [
  ['CTE shadowing a permitted name', 'WITH cpu AS (SELECT * FROM disk) SELECT * FROM cpu', 403, 'disk'],
  ['CTE named like a forbidden table is no table', 'WITH disk AS (SELECT * FROM cpu) SELECT * FROM disk', 200],
  ['CTE in a subquery shadowing', 'SELECT * FROM (WITH mem AS (SELECT * FROM disk) SELECT * FROM mem) x', 403, 'disk'],
  ['CTE scope ends with its query', 'SELECT * FROM (WITH disk AS (SELECT * FROM cpu) SELECT * FROM disk) a, disk', 403, 'disk'],
  ['recursive CTE reading a forbidden table', 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r, disk WHERE n < 2) SELECT * FROM r', 403, 'disk'],
  ['quoted name', 'SELECT * FROM "disk"', 403, 'disk'],
  ['quoted db.m', 'SELECT * FROM "db1"."disk"', 403, 'disk'],
  ['other letter case is another name', 'SELECT * FROM CPU', 403, 'CPU'],
  ['subquery in WHERE', 'SELECT * FROM cpu WHERE value IN (SELECT value FROM disk)', 403, 'disk'],
  ['scalar subquery in the select list', 'SELECT (SELECT max(value) FROM disk) AS x', 403, 'disk'],
  ['EXISTS', 'SELECT 1 WHERE EXISTS (SELECT 1 FROM db1.disk)', 403, 'disk'],
  ['db.m of another database', 'SELECT * FROM db2.cpu', 403, 'cpu'],
  ['UNION', 'SELECT value FROM cpu UNION ALL SELECT value FROM disk', 403, 'disk'],
  ['INTERSECT', 'SELECT value FROM cpu INTERSECT SELECT value FROM db1.disk', 403, 'disk'],
  ['lateral join', 'SELECT * FROM cpu c, LATERAL (SELECT * FROM disk d WHERE d.time = c.time) x', 403, 'disk'],
  ['join', 'SELECT * FROM cpu JOIN disk USING (time)', 403, 'disk'],
  ['permitted join', 'SELECT * FROM cpu JOIN mem USING (time)', 200],
  ['table function range', 'SELECT * FROM range(3)', 200],
  ['table function query_table', "SELECT * FROM query_table('disk')", 400],
  ['table function read_parquet', "SELECT * FROM read_parquet('db1/disk/*.parquet')", 400],
];

describe('hostile SQL shapes', () => {
  const routes = ['/api/v1/query', '/api/v1/query/arrow', '/api/v1/query/msgpack', '/api/v1/query/estimate'];
  test('every table the syntax tree reads is authorized, on every format', async () => {
    for (const [label, sql, status, m] of HOSTILE)
      for (const route of routes) {
        const res = await s.fetch(route, { method: 'POST', token: narrow.secret, headers: { 'content-type': 'application/json', 'x-svc-database': 'db1' }, body: JSON.stringify({ sql }) });
        const text = await res.text();
        expect(`${label} on ${route}: ${res.status}`).toBe(`${label} on ${route}: ${status}`);
        if (m) expect(JSON.parse(text).measurement).toBe(m);
      }
  });
});

describe('listings show only what the token may read', () => {
  test('the Postgres catalog tables list only the measurements the token may read', async () => {
    const names = async (token: string | undefined) => {
      const res = await s.fetch('/api/v1/query', { method: 'POST', token, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: "SELECT table_name FROM information_schema.tables WHERE table_schema = 'db1' ORDER BY 1" }) });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: string[][] }).data.map((r) => r[0]);
    };
    expect(await names(undefined)).toContain('disk');
    const narrowed = await names(narrow.secret);
    expect(narrowed).toContain('cpu');
    expect(narrowed).not.toContain('disk');
  });

  test('every catalog listing (schemata, pg_namespace, pg_database, tables, columns, ...) names only readable databases, on every format', async () => {
    const CATALOG = [
      'SELECT schema_name FROM information_schema.schemata',
      'SELECT nspname FROM pg_catalog.pg_namespace',
      'SELECT datname FROM pg_catalog.pg_database',
      'SELECT table_schema FROM information_schema.tables',
      'SELECT table_schema FROM information_schema.columns',
      'SELECT schemaname FROM pg_catalog.pg_tables',
      'SELECT n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid',
    ];
    const post = (route: string, sql: string, token: string | undefined) =>
      s.fetch(route, { method: 'POST', token, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: `SELECT DISTINCT * FROM (${sql}) ORDER BY 1` }) });
    const FORMATS: [string, (sql: string, token: string | undefined) => Promise<unknown[]>][] = [
      ['json', async (sql, token) => ((await (await post('/api/v1/query', sql, token)).json()) as { data: unknown[][] }).data.map((r) => r[0])],
      ['arrow', async (sql, token) => [...tableFromIPC(new Uint8Array(await (await post('/api/v1/query/arrow', sql, token)).arrayBuffer())).getChildAt(0)!.toArray()]],
      ['msgpack', async (sql, token) => (unpack(new Uint8Array(await (await post('/api/v1/query/msgpack', sql, token)).arrayBuffer())) as { data: unknown[][] }).data[0]!],
    ];
    for (const [format, listed] of FORMATS)
      for (const sql of CATALOG) {
        expect(`${format} ${sql}: ${await listed(sql, narrow.secret)}`).toBe(`${format} ${sql}: db1,logs_a`);
        expect(`${format} ${sql}: ${await listed(sql, undefined)}`).toBe(`${format} ${sql}: db1,db2,logs_a,other`);
      }
  });

  const names = (rows: unknown[][]) => rows.map((r) => r.join('.')).sort();
  test('SHOW MEASUREMENTS / SHOW TABLES / SHOW DATABASES', async () => {
    const q = async (sql: string, db?: string) => (await s.fetch('/api/v1/query', { method: 'POST', token: narrow.secret, headers: { 'content-type': 'application/json', ...(db ? { 'x-svc-database': db } : {}) }, body: JSON.stringify({ sql }) })).json() as Promise<{ data: unknown[][] }>;
    expect(names((await q('SHOW MEASUREMENTS')).data)).toEqual(['db1.cpu', 'db1.cpu_hot', 'db1.cpu_hot_tle', 'db1.cpu_tle', 'db1.mem', 'logs_a.app']);
    expect(names((await q('SHOW TABLES', 'db1')).data)).toEqual(['db1.cpu', 'db1.cpu_hot', 'db1.cpu_hot_tle', 'db1.cpu_tle', 'db1.mem']);
    expect(names((await q('SHOW MEASUREMENTS FROM db2')).data)).toEqual([]);
    expect(names((await q('SHOW DATABASES')).data)).toEqual(['db1', 'logs_a']);
    const msgpack = await s.fetch('/api/v1/query/msgpack', { method: 'POST', token: narrow.secret, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: 'SHOW DATABASES' }) });
    expect(msgpack.status).toBe(200);
  });

  test('GET /api/v1/measurements and /api/v1/databases', async () => {
    const ms = (await json(s, 'GET', '/api/v1/measurements', undefined, narrow.secret)).body;
    expect(ms.measurements.map((m: { database: string; name: string }) => `${m.database}.${m.name}`).sort()).toEqual(['db1.cpu', 'db1.cpu_hot', 'db1.cpu_hot_tle', 'db1.cpu_tle', 'db1.mem', 'logs_a.app']);
    const dbs = (await json(s, 'GET', '/api/v1/databases', undefined, narrow.secret)).body;
    expect(dbs.databases).toEqual([
      { name: 'db1', measurement_count: 5 },
      { name: 'logs_a', measurement_count: 1 },
    ]);
    expect((await json(s, 'GET', '/api/v1/databases/db1/measurements', undefined, narrow.secret)).body.measurements).toEqual(['cpu', 'cpu_hot', 'cpu_hot_tle', 'cpu_tle', 'mem'].map((name) => ({ name })));
    expect((await json(s, 'GET', '/api/v1/databases/db2', undefined, narrow.secret)).body).toMatchObject({ action: 'read', database: 'db2' });
    expect((await json(s, 'POST', '/api/v1/databases', { name: 'newdb' }, narrow.secret)).status).toBe(403);
    const all = (await json(s, 'GET', '/api/v1/databases', undefined, plain.secret)).body.databases.map((d: { name: string }) => d.name);
    expect(all).toEqual(['db1', 'db2', 'logs_a', 'other']);
  });
});

describe('tiering shows only what the token may read', () => {
  const dbm = (x: { database: string; measurement: string | null }) => `${x.database}.${x.measurement ?? '*'}`;

  test('files and stats', async () => {
    await flush(s);
    const files = async (token: string | undefined, query = '') =>
      [...new Set(((await json(s, 'GET', `/api/v1/tiering/files?limit=10000${query}`, undefined, token)).body as { files: { database: string; measurement: string }[] }).files.map(dbm))].sort();
    const all = await files(plain.secret);
    expect(all).toEqual(expect.arrayContaining(['db1.cpu', 'db1.disk', 'db2.cpu', 'other.cpu']));
    const narrowed = await files(narrow.secret);
    expect(narrowed).toEqual(all.filter((x) => expected('read', x.split('.')[0]!, x.split('.')[1]!)));
    expect(narrowed).toContain('db1.cpu');
    expect(await files(narrow.secret, '&database=db2')).toEqual([]);
    expect(await files(narrow.secret, '&database=db1&measurement=disk')).toEqual([]);
    // The page is filled from what the token may read, not cut from the whole listing.
    expect(((await json(s, 'GET', '/api/v1/tiering/files?limit=1&database=db1&measurement=cpu', undefined, narrow.secret)).body as { count: number }).count).toBe(1);

    const stats = async (token: string | undefined) => (await json(s, 'GET', '/api/v1/tiering/stats', undefined, token)).body as { hot: { files: number }; by_database: Record<string, { hot: { files: number } }> };
    expect(Object.keys((await stats(plain.secret)).by_database)).toEqual(expect.arrayContaining(['db1', 'db2', 'logs_a', 'other']));
    const mine = await stats(narrow.secret);
    expect(Object.keys(mine.by_database).sort()).toEqual(['db1', 'logs_a']);
    const readableFiles = ((await json(s, 'GET', '/api/v1/tiering/files?limit=10000', undefined, narrow.secret)).body as { files: { database: string }[] }).files;
    expect(mine.hot.files).toBe(readableFiles.length);
    expect(mine.by_database.db1!.hot.files).toBe(readableFiles.filter((f) => f.database === 'db1').length);
  });

  test('policies, listed and by id', async () => {
    const ids: Record<string, string> = {};
    for (const [database, measurement] of [['db1', 'cpu'], ['db1', 'disk'], ['db2', null], ['db1', null]] as const) {
      const r = await json(s, 'POST', '/api/v1/tiering/policies', { database, measurement, hot_max_age_days: 3650 });
      expect(r.status).toBe(201);
      ids[`${database}.${measurement ?? '*'}`] = r.body.id;
    }
    const listed = async (token: string) => ((await json(s, 'GET', '/api/v1/tiering/policies', undefined, token)).body as { policies: { database: string; measurement: string | null }[] }).policies.map(dbm).sort();
    expect(await listed(plain.secret)).toEqual(['db1.*', 'db1.cpu', 'db1.disk', 'db2.*']);
    expect(await listed(narrow.secret)).toEqual(['db1.*', 'db1.cpu']);
    expect((await json(s, 'GET', `/api/v1/tiering/policies/${ids['db1.cpu']}`, undefined, narrow.secret)).body).toMatchObject({ database: 'db1', measurement: 'cpu' });
    for (const hidden of ['db1.disk', 'db2.*']) {
      const r = await json(s, 'GET', `/api/v1/tiering/policies/${ids[hidden]}`, undefined, narrow.secret);
      expect(r.status).toBe(404);
      expect(JSON.stringify(r.body)).not.toMatch(/disk|db2/);
      expect((await json(s, 'GET', `/api/v1/tiering/policies/${ids[hidden]}`, undefined, plain.secret)).status).toBe(200);
    }
    for (const id of Object.values(ids)) expect((await json(s, 'DELETE', `/api/v1/tiering/policies/${id}`)).status).toBe(200);
  });
});

describe('changes apply at the very next request', () => {
  test('membership, role and measurement changes, with the token cached', async () => {
    const read = async (db: string, m: string) => (await s.fetch('/api/v1/query', { method: 'POST', token: plain.secret, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: `SELECT count(*) FROM ${db}.${m}` }) })).status;
    expect(await read('db1', 'cpu')).toBe(200);
    const t = await create(`/organizations/${org}/teams`, { name: 'late' });
    const role = await create(`/teams/${t}/roles`, { name: 'db2 only', database_pattern: 'db2', permissions: ['read'] });
    await create(`/teams/${t}/members`, { token_id: plain.id });
    expect(await read('db1', 'cpu')).toBe(403);
    expect(await read('db2', 'cpu')).toBe(200);
    expect((await json(s, 'PATCH', `/api/v1/rbac/roles/${role}`, { database_pattern: 'db*' })).status).toBe(200);
    expect(await read('db1', 'cpu')).toBe(200);
    const grant = await create(`/roles/${role}/measurements`, { measurement_pattern: 'mem', permissions: ['read'] });
    expect(await read('db1', 'cpu')).toBe(403);
    expect((await json(s, 'PATCH', `/api/v1/rbac/roles/${role}/measurements/${grant}`, { measurement_pattern: 'c*' })).status).toBe(200);
    expect(await read('db1', 'cpu')).toBe(200);
    expect((await json(s, 'DELETE', `/api/v1/rbac/roles/${role}/measurements/${grant}`)).status).toBe(200);
    expect((await json(s, 'PATCH', `/api/v1/rbac/roles/${role}`, { permissions: ['write'] })).status).toBe(200);
    expect(await read('db1', 'cpu')).toBe(403);
    expect((await json(s, 'DELETE', `/api/v1/rbac/teams/${t}/members/${plain.id}`)).status).toBe(200);
    expect(await read('db1', 'cpu')).toBe(200);
    // The token's own list still bounds it: roles never widen.
    await create(`/teams/${t}/members`, { token_id: plain.id });
    expect((await json(s, 'PATCH', `/api/v1/rbac/roles/${role}`, { permissions: ['read', 'write', 'delete'] })).status).toBe(200);
    const del = await json(s, 'GET', `/api/v1/rbac/check?token_id=${plain.id}&database=db1&measurement=cpu&action=delete`);
    expect(del.body.allowed).toBe(false);
    // Deleting the team removes the membership with it.
    expect((await json(s, 'DELETE', `/api/v1/rbac/teams/${t}`)).status).toBe(200);
    expect((await json(s, 'GET', `/api/v1/rbac/roles/${role}`)).status).toBe(404);
    expect((await json(s, 'GET', `/api/v1/rbac/tokens/${plain.id}/effective`)).body).toMatchObject({ narrowed_by_roles: false, teams: [] });
  });
});

describe('continuous queries and retention run with their owner\'s rights of the moment', () => {
  test('a demoted owner narrowed by a role: runs are refused naming the measurement', async () => {
    const owner = await token('owner', { is_admin: true });
    const cq = await json(s, 'POST', '/api/v1/continuous_queries', { name: 'agg', database: 'db1', query: 'SELECT time, value FROM cpu WHERE time >= $start AND time < $end', destination_measurement: 'agg_cpu', interval: '1h' }, owner.secret);
    expect(cq.status).toBe(201);
    const rp = await json(s, 'POST', '/api/v1/retention', { name: 'old-disk', database: 'db1', measurement: 'disk', duration: '30d' }, owner.secret);
    expect(rp.status).toBe(201);
    const window = { start_time: T_MS - 3_600_000, end_time: T_MS + 3_600_000 };
    expect((await json(s, 'POST', `/api/v1/continuous_queries/${cq.body.id}/execute`, window)).body.status).toBe('success');
    expect((await json(s, 'POST', `/api/v1/retention/${rp.body.id}/execute`)).body.status).toBe('success');

    expect((await json(s, 'PATCH', `/api/v1/auth/tokens/${owner.id}`, { is_admin: false, permissions: ['read', 'write', 'delete'] })).status).toBe(200);
    await create(`/teams/${team}/members`, { token_id: owner.id });
    const run = (await json(s, 'POST', `/api/v1/continuous_queries/${cq.body.id}/execute`, window)).body;
    expect(run).toMatchObject({ status: 'failed', error: expect.stringContaining('may not write db1.agg_cpu') });
    const purge = (await json(s, 'POST', `/api/v1/retention/${rp.body.id}/execute`)).body;
    expect(purge).toMatchObject({ status: 'failed', error: expect.stringContaining('may not delete db1.disk') });
    // Reading the source is checked too: a destination it may write, a source it may not read.
    const cq2 = await json(s, 'PUT', `/api/v1/continuous_queries/${cq.body.id}`, { destination_measurement: 'cpu_agg', query: 'SELECT time, value FROM disk WHERE time >= $start AND time < $end' });
    expect(cq2.status).toBe(200);
    expect((await json(s, 'POST', `/api/v1/continuous_queries/${cq.body.id}/execute`, window)).body.status).toBe('success');

    // Listings of definitions show only those about data the token may read.
    const names = async (path: string, key: string, tok: string) => (await json(s, 'GET', path, undefined, tok)).body[key].map((x: { name: string }) => x.name);
    expect(await names('/api/v1/continuous_queries', 'continuous_queries', narrow.secret)).toEqual(['agg']);
    expect(await names('/api/v1/retention', 'policies', narrow.secret)).toEqual([]);
    expect(await names('/api/v1/retention', 'policies', plain.secret)).toEqual(['old-disk']);
    // One it may not see, asked by id (ids are small integers), answers as an unknown id: naming nothing.
    const hidden = async (path: string) => {
      const r = await json(s, 'GET', path, undefined, narrow.secret);
      expect(`${path}: ${r.status} ${JSON.stringify(r.body)}`).not.toMatch(/disk|db2|403/);
      expect(r.status).toBe(404);
    };
    await hidden(`/api/v1/retention/${rp.body.id}`);
    await hidden(`/api/v1/retention/${rp.body.id}/executions`);
    expect((await json(s, 'GET', `/api/v1/retention/${rp.body.id}`, undefined, plain.secret)).status).toBe(200);
    expect((await json(s, 'GET', `/api/v1/continuous_queries/${cq.body.id}/executions`, undefined, narrow.secret)).status).toBe(200);
    const cqDb2 = await json(s, 'POST', '/api/v1/continuous_queries', { name: 'agg-db2', database: 'db2', query: 'SELECT time, value FROM cpu WHERE time >= $start AND time < $end', destination_measurement: 'agg_db2', interval: '1h' });
    expect(cqDb2.status).toBe(201);
    await hidden(`/api/v1/continuous_queries/${cqDb2.body.id}`);
    await hidden(`/api/v1/continuous_queries/${cqDb2.body.id}/executions`);
    expect((await json(s, 'GET', `/api/v1/continuous_queries/${cqDb2.body.id}`, undefined, plain.secret)).status).toBe(200);
    expect((await json(s, 'DELETE', `/api/v1/continuous_queries/${cqDb2.body.id}`)).status).toBe(200);
  });
});

describe('MQTT subscriptions', () => {
  test('are listed to tokens that may read their database', async () => {
    const sub = await json(s, 'POST', '/api/v1/mqtt/subscriptions', { name: 'db2-feed', broker: 'tcp://127.0.0.1:1', topics: ['x/#'], database: 'db2', auto_start: false });
    expect(sub.status).toBe(201);
    const list = async (tok: string) => (await json(s, 'GET', '/api/v1/mqtt/subscriptions', undefined, tok)).body.subscriptions.map((x: { name: string }) => x.name);
    expect(await list(plain.secret)).toEqual(['db2-feed']);
    expect(await list(narrow.secret)).toEqual([]);
    for (const path of ['', '/stats']) {
      const r = await json(s, 'GET', `/api/v1/mqtt/subscriptions/${sub.body.id}${path}`, undefined, narrow.secret);
      expect(r.status).toBe(404);
      expect(JSON.stringify(r.body)).not.toContain('db2');
    }
    expect((await json(s, 'GET', `/api/v1/mqtt/subscriptions/${sub.body.id}`, undefined, plain.secret)).status).toBe(200);
    expect(Object.keys((await json(s, 'GET', '/api/v1/mqtt/stats', undefined, narrow.secret)).body.subscriptions_stats)).toEqual([]);
    expect((await json(s, 'DELETE', `/api/v1/mqtt/subscriptions/${sub.body.id}`)).status).toBe(200);
  });
});

describe('backup and restore', () => {
  test('the RBAC tables come back with a metadata restore', async () => {
    const waitIdle = () => waitFor(async () => (await json(s, 'GET', '/api/v1/backup/status')).body.status !== 'running', 60_000, 'backup operation');
    const started = await json(s, 'POST', '/api/v1/backup');
    expect(started.status).toBe(202);
    await waitIdle();
    expect((await json(s, 'DELETE', `/api/v1/rbac/organizations/${org}`)).status).toBe(200);
    expect((await json(s, 'GET', `/api/v1/rbac/teams/${team}`)).status).toBe(404);
    expect((await json(s, 'GET', `/api/v1/rbac/roles/${roleDb1}`)).status).toBe(404);
    // The cascade took the narrow token out of team ops: db1.disk is still refused by its other team.
    expect((await READ_ROUTES[0]![1](narrow.secret, 'db1', 'cpu')).status).toBe(403);
    const restore = await json(s, 'POST', '/api/v1/backup/restore', { backup_id: started.body.backup_id, restore_data: false, confirm: true });
    expect(restore.status).toBe(202);
    await waitIdle();
    expect((await json(s, 'GET', `/api/v1/rbac/organizations/${org}`)).body.name).toBe('acme');
    expect((await json(s, 'GET', `/api/v1/rbac/roles/${roleDb1}/measurements`)).body.count).toBe(2);
    expect((await READ_ROUTES[0]![1](narrow.secret, 'db1', 'cpu')).status).toBe(200);
    expect((await READ_ROUTES[0]![1](narrow.secret, 'db1', 'disk')).status).toBe(403);
  });
});

describe('compaction candidates', () => {
  test('list only partitions of measurements the token may read', async () => {
    for (let k = 0; k < 2; k++) {
      for (const db of ['db1', 'db2']) expect((await s.fetch(`/write?db=${db}`, { method: 'POST', body: lp('cpu_compact', k) })).status).toBe(204);
      await flush(s);
    }
    const partitions = async (token: string | undefined, query = '') =>
      ((await json(s, 'GET', `/api/v1/compaction/candidates${query}`, undefined, token)).body as { candidates: { partition: string }[] }).candidates.map((c) => c.partition.split('/').slice(0, 2).join('.'));
    expect(await partitions(undefined)).toEqual(expect.arrayContaining(['db1.cpu_compact', 'db2.cpu_compact']));
    const narrowed = await partitions(narrow.secret);
    expect(narrowed).toContain('db1.cpu_compact');
    expect(narrowed.filter((p) => !expected('read', p.split('.')[0]!, p.split('.')[1]!))).toEqual([]);
    expect(await partitions(narrow.secret, '?database=db2')).toEqual([]);
  });

  test('jobs and history list only jobs of databases the token may read', async () => {
    for (const database of ['db1', 'db2']) expect((await json(s, 'POST', '/api/v1/compaction/trigger', { database, measurement: 'cpu_compact' })).status).toBe(200);
    await waitForJobs(s, 2);
    const history = async (token: string | undefined) =>
      ((await json(s, 'GET', '/api/v1/compaction/history?limit=100', undefined, token)).body as { history: { database: string | null }[] }).history.map((j) => j.database);
    expect(await history(undefined)).toEqual(expect.arrayContaining(['db1', 'db2']));
    expect(await history(narrow.secret)).toEqual(['db1']);
    expect((await json(s, 'GET', '/api/v1/compaction/jobs', undefined, narrow.secret)).body).toEqual({ jobs: [], count: 0 });
  });
});

describe('write stats', () => {
  test('the last flush error (it names a file of any database) is shown whole only to admins', async () => {
    // A file where the database folder should be makes every flush of that database fail until it is removed.
    const blocker = join(s.dir, 'data', 'svc', 'blocked_db');
    mkdirSync(join(s.dir, 'data', 'svc'), { recursive: true });
    writeFileSync(blocker, 'in the way');
    expect((await s.fetch('/write?db=blocked_db', { method: 'POST', body: lp('secret_m') })).status).toBe(204);
    const flushing = s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
    try {
      const lpStats = async (token?: string) => (await json(s, 'GET', '/api/v1/write/line-protocol/stats', undefined, token)).body.buffer;
      await waitFor(async () => (await lpStats()).flush_failures > 0, 30_000, 'a failed flush');
      expect((await lpStats()).last_error).toContain('blocked_db/secret_m/');
      const seen = [
        (await lpStats(narrow.secret)).last_error,
        (await json(s, 'GET', '/api/v1/write/line-protocol/health', undefined, narrow.secret)).body.last_error,
        (await json(s, 'GET', '/api/v1/write/msgpack/stats', undefined, narrow.secret)).body.buffer.last_error,
      ];
      expect(seen).toEqual([HIDDEN_ERROR, HIDDEN_ERROR, HIDDEN_ERROR]);
    } finally {
      unlinkSync(blocker);
    }
    expect((await flushing).status).toBe(200);
  });
});

/**
 * System databases (issue 40): `agent_memory`, where the memory service keeps its records, is read and
 * written only by that service's own token and by admins. Ordinary read and write tokens get 403 on
 * every path that touches data (SQL over HTTP in every format, exports, pgwire, every ingest route,
 * delete, database routes) and never see it in a listing; the memory service keeps working, and a
 * purge erases a memory on a default install (delete.enabled = false). One real server; nothing mocked.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import pg from 'pg';
import { MemoryApiError, MemoryClient } from '../src/memory/client/memory-client.ts';
import { remoteWriteBody } from './helpers/prom-write.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { MEMORY_ADMIN_KEY, seedPayload, uid } from './memory-support.ts';

const DB = 'agent_memory';
const T_MS = 1_700_000_000_000;
let s: TestServer;
let memory: MemoryClient;
let pgPort = 0;
/** Ordinary tokens: read only, write only, and every permission (delete included). */
let reader: { id: string; secret: string };
let writer: { id: string; secret: string };
let full: { id: string; secret: string };

async function token(name: string, permissions: string[]): Promise<{ id: string; secret: string }> {
  const r = await json(s, 'POST', '/api/v1/auth/tokens', { name, permissions });
  expect(r.status).toBe(201);
  return { id: r.body.id, secret: r.body.token };
}

beforeAll(async () => {
  // A default install (delete.enabled false), with the Postgres wire door open.
  s = await startServer({ env: { SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_ADMIN_KEY, SVC_PGWIRE_ENABLED: 'true', SVC_PGWIRE_PORT: '0', SVC_PGWIRE_HOST: '127.0.0.1' } });
  pgPort = Number(/pgwire_port"?[=:](\d+)/.exec(s.output())![1]);
  memory = new MemoryClient({ baseUrl: s.memoryUrl, apiKey: MEMORY_ADMIN_KEY });
  reader = await token('reader', ['read']);
  writer = await token('writer', ['write']);
  full = await token('full', ['read', 'write', 'delete']);
  // The memory service's own writes make the database exist, with a measurement.
  await memory.createMemory({ agent_id: 'wall-agent', content: 'the secret plan of organization default' });
});
afterAll(async () => {
  await s?.cleanup();
});

const sqlPost = (path: string, sql: string, tok: string, headers: Record<string, string> = {}) =>
  s.fetch(path, { method: 'POST', token: tok, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(path.endsWith('/export') ? { sql, format: 'csv' } : { sql }) });

/** Every HTTP route that reads a measurement, as token -> response. */
const READS: [string, (tok: string) => Promise<Response>][] = [
  ['POST /api/v1/query', (tok) => sqlPost('/api/v1/query', `SELECT org_id, content FROM ${DB}.memories`, tok)],
  ['POST /api/v1/query (bare name, header)', (tok) => sqlPost('/api/v1/query', 'SELECT content FROM memories', tok, { 'x-svc-database': DB })],
  ['POST /api/v1/query (other case)', (tok) => sqlPost('/api/v1/query', 'SELECT content FROM Agent_Memory.memories', tok)],
  ['POST /api/v1/query/arrow', (tok) => sqlPost('/api/v1/query/arrow', `SELECT content FROM ${DB}.memories`, tok)],
  ['POST /api/v1/query/msgpack', (tok) => sqlPost('/api/v1/query/msgpack', `SELECT content FROM "${DB}"."memories"`, tok)],
  ['POST /api/v1/query/estimate', (tok) => sqlPost('/api/v1/query/estimate', `SELECT content FROM ${DB}.memories`, tok)],
  ['POST /api/v1/query/export', (tok) => sqlPost('/api/v1/query/export', `SELECT content FROM ${DB}.memories`, tok)],
  ['DESCRIBE', (tok) => sqlPost('/api/v1/query', `DESCRIBE ${DB}.memories`, tok)],
  ['GET /api/v1/query/:measurement', (tok) => s.fetch(`/api/v1/query/memories?database=${DB}`, { token: tok })],
  ['GET /api/v1/databases/:name', (tok) => s.fetch(`/api/v1/databases/${DB}`, { token: tok })],
  ['GET /api/v1/databases/:name/measurements', (tok) => s.fetch(`/api/v1/databases/${DB}/measurements`, { token: tok })],
];

const TLE = `ISS (ZARYA)
1 25544U 98067A   08264.51782528 -.00002182  00000-0 -11606-4 0  2927
2 25544  51.6416 247.4627 0006703 130.5360 325.0288 15.72125391563537
`;
const forged = (id: string) => seedPayload([{ timeMs: Date.now(), memory_id: id, agent_id: 'wall-agent', content: `forged ${id}` }]);
const lp = (id: string) => `memories,org_id=default memory_id="${id}",agent_id="wall-agent",content="forged ${id}" ${BigInt(Date.now()) * 1_000_000n}\n`;

/** Every ingest route, as (token, memory id to forge) -> response. */
const WRITES: [string, (tok: string, id: string) => Promise<Response>][] = [
  ['POST /api/v1/write/msgpack', (tok, id) => s.fetch('/api/v1/write/msgpack', { method: 'POST', token: tok, headers: { 'content-type': 'application/msgpack', 'x-svc-database': DB }, body: forged(id) })],
  ['POST /write', (tok, id) => s.fetch(`/write?db=${DB}`, { method: 'POST', token: tok, body: lp(id) })],
  ['POST /api/v2/write', (tok, id) => s.fetch(`/api/v2/write?bucket=${DB}`, { method: 'POST', token: tok, body: lp(id) })],
  ['POST /api/v1/write/line-protocol', (tok, id) => s.fetch('/api/v1/write/line-protocol', { method: 'POST', token: tok, headers: { 'x-svc-database': DB }, body: lp(id) })],
  ['POST /api/v1/import/lp', (tok, id) => s.fetch(`/api/v1/import/lp?db=${DB}`, { method: 'POST', token: tok, body: lp(id) })],
  ['POST /api/v1/import/csv', (tok, id) => s.fetch(`/api/v1/import/csv?db=${DB}&measurement=memories`, { method: 'POST', token: tok, headers: { 'content-type': 'text/csv' }, body: `time,memory_id,org_id,content\n${T_MS},${id},default,forged\n` })],
  ['POST /api/v1/write/tle', (tok) => s.fetch(`/api/v1/write/tle?db=${DB}&measurement=memories`, { method: 'POST', token: tok, body: TLE })],
  ['POST /api/v1/prom/write', (tok) => s.fetch(`/api/v1/prom/write?db=${DB}`, { method: 'POST', token: tok, headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' }, body: remoteWriteBody([{ labels: { __name__: 'memories', org_id: 'default' }, samples: [[1, T_MS]] }]) })],
];

async function status(label: string, res: Promise<Response>): Promise<string> {
  const r = await res;
  return `${label}: ${r.status} ${r.status === 403 ? '' : (await r.text()).slice(0, 160)}`.trim();
}

/** The names a listing answers, for an ordinary token. */
const namesOf = (rows: unknown[][]) => rows.map((r) => String(r[0]));

describe('ordinary tokens neither reach nor see a system database', () => {
  test('every read route answers 403 to a read token and to a token with every permission', async () => {
    for (const tok of [reader.secret, full.secret])
      for (const [label, route] of READS) expect(await status(label, route(tok))).toBe(`${label}: 403`);
  });

  test('every ingest route answers 403 to a write token, and nothing forged shows in the memory list', async () => {
    for (const tok of [writer.secret, full.secret])
      for (const [label, route] of WRITES) expect(await status(label, route(tok, uid('forged')))).toBe(`${label}: 403`);
    const listed = await memory.listMemories({ agent_id: 'wall-agent' });
    expect(listed.memories.map((m) => m.content)).toEqual(['the secret plan of organization default']);
  });

  test('delete, and creating a database by that name, are refused as the wall (not as the delete switch)', async () => {
    const del = await json(s, 'POST', '/api/v1/delete', { database: DB, measurement: 'memories', where: "org_id = 'default'", confirm: true }, full.secret);
    expect(del).toMatchObject({ status: 403, body: { error: `token may not delete ${DB}.memories` } });
    for (const name of [DB, 'AGENT_MEMORY']) expect((await json(s, 'POST', '/api/v1/databases', { name }, writer.secret)).status).toBe(403);
  });

  test('listings leave it out: /api/v1/databases, /api/v1/measurements, SHOW DATABASES, SHOW MEASUREMENTS', async () => {
    const dbs = (await json(s, 'GET', '/api/v1/databases', undefined, reader.secret)).body.databases.map((d: { name: string }) => d.name);
    expect(dbs).not.toContain(DB);
    const ms = (await json(s, 'GET', '/api/v1/measurements', undefined, reader.secret)).body.measurements.map((m: { database: string }) => m.database);
    expect(ms).not.toContain(DB);
    expect((await json(s, 'GET', `/api/v1/measurements?db=${DB}`, undefined, reader.secret)).body.measurements ?? []).toEqual([]);
    for (const sql of ['SHOW DATABASES', 'SHOW MEASUREMENTS', 'SELECT table_schema FROM information_schema.tables']) {
      const rows = (await json(s, 'POST', '/api/v1/query', { sql }, reader.secret)).body.data as unknown[][];
      expect(namesOf(rows).some((n) => n.startsWith(DB))).toBe(false);
    }
  });

  test('the Postgres wire door refuses it too', async () => {
    const c = new pg.Client({ host: '127.0.0.1', port: pgPort, user: 'reader', password: reader.secret, database: DB } as pg.ClientConfig);
    await c.connect();
    try {
      expect(await c.query(`SELECT content FROM ${DB}.memories`).then(() => 'read', (e: Error) => e.message)).toContain(`may not read ${DB}.memories`);
      expect(await c.query('SELECT content FROM memories').then(() => 'read', (e: Error) => e.message)).toContain(`may not read ${DB}.memories`);
      expect(namesOf((await c.query({ text: 'SHOW DATABASES', rowMode: 'array' })).rows)).not.toContain(DB);
    } finally {
      await c.end();
    }
  });

  test('definitions about it (continuous queries, retention policies, MQTT subscriptions) are hidden (404 by id, as an unknown id) and refused', async () => {
    const cq = await json(s, 'POST', '/api/v1/continuous_queries', { name: 'mem-count', database: DB, query: 'SELECT time, importance FROM memories WHERE time >= $start AND time < $end', destination_database: 'copies', destination_measurement: 'memcopy', interval: '1h' });
    expect(cq.status).toBe(201);
    const rp = await json(s, 'POST', '/api/v1/retention', { name: 'mem-old', database: DB, measurement: 'memories', duration: '3650d' });
    expect(rp.status).toBe(201);
    const sub = await json(s, 'POST', '/api/v1/mqtt/subscriptions', { name: 'mem-feed', broker: 'mqtt://127.0.0.1:1', topics: ['m/#'], database: DB, auto_start: false });
    expect(sub.status).toBe(201);
    const visible = async (path: string, key: string) => ((await json(s, 'GET', path, undefined, reader.secret)).body[key] as { name: string }[]).map((x) => x.name);
    expect(await visible('/api/v1/continuous_queries', 'continuous_queries')).not.toContain('mem-count');
    expect(await visible('/api/v1/retention', 'policies')).not.toContain('mem-old');
    expect(await visible('/api/v1/mqtt/subscriptions', 'subscriptions')).not.toContain('mem-feed');
    expect((await json(s, 'GET', `/api/v1/continuous_queries/${cq.body.id}`, undefined, reader.secret)).status).toBe(404);
    expect((await json(s, 'GET', `/api/v1/retention/${rp.body.id}`, undefined, reader.secret)).status).toBe(404);
    expect((await json(s, 'GET', `/api/v1/mqtt/subscriptions/${sub.body.id}`, undefined, reader.secret)).status).toBe(404);
    // Continuous queries reading or writing it, owned by an admin since demoted, are refused at their next run.
    const owner = await token('cq-owner', ['read', 'write']);
    expect((await json(s, 'PATCH', `/api/v1/auth/tokens/${owner.id}`, { is_admin: true })).status).toBe(200);
    const from = await json(s, 'POST', '/api/v1/continuous_queries', { name: 'from-mem', database: DB, query: 'SELECT time, importance FROM memories WHERE time >= $start AND time < $end', destination_database: 'copies', destination_measurement: 'memcopy', interval: '1h' }, owner.secret);
    const into = await json(s, 'POST', '/api/v1/continuous_queries', { name: 'into-mem', database: 'copies', query: 'SELECT time, importance FROM memcopy WHERE time >= $start AND time < $end', destination_database: DB, destination_measurement: 'memories', interval: '1h' }, owner.secret);
    expect([from.status, into.status]).toEqual([201, 201]);
    expect((await json(s, 'PATCH', `/api/v1/auth/tokens/${owner.id}`, { is_admin: false })).status).toBe(200);
    for (const [id, refusal] of [[from.body.id, `may not read ${DB}.memories`], [into.body.id, `may not write ${DB}.memories`]]) {
      const run = await json(s, 'POST', `/api/v1/continuous_queries/${id}/execute`, {});
      expect(run.body).toMatchObject({ status: 'failed', error: expect.stringContaining(refusal) });
    }
    for (const [path, id] of [['continuous_queries', cq.body.id], ['continuous_queries', from.body.id], ['continuous_queries', into.body.id], ['retention', rp.body.id], ['mqtt/subscriptions', sub.body.id]])
      expect((await json(s, 'DELETE', `/api/v1/${path}/${id}`)).status).toBe(200);
    // Creating them stays admin-only, so an ordinary token cannot aim one at it either.
    expect((await json(s, 'POST', '/api/v1/mqtt/subscriptions', { name: 'x', broker: 'mqtt://127.0.0.1:1', topics: ['m/#'], database: DB, auto_start: false }, full.secret)).status).toBe(403);
    expect((await json(s, 'POST', '/api/v1/retention', { name: 'x', database: DB, duration: '1d' }, full.secret)).status).toBe(403);
  });

  test('the RBAC check explains the refusal', async () => {
    const r = await json(s, 'GET', `/api/v1/rbac/check?token_id=${reader.id}&database=${DB}&measurement=memories&action=read`);
    expect(r.body).toEqual({ allowed: false, reason: `${DB} is a system database: only the service that keeps it and admins reach it` });
  });
});

describe('its service and admins still reach it', () => {
  test('a service token (is_service) reaches the system database and nothing else', async () => {
    const service = await json(s, 'POST', '/api/v1/auth/tokens', { name: 'remote-memory', is_service: true, permissions: ['read'] });
    expect(service.body).toMatchObject({ is_service: true, is_admin: false });
    const tok = service.body.token as string;
    expect((await sqlPost('/api/v1/query', `SELECT count(*) FROM ${DB}.memories`, tok)).status).toBe(200);
    expect((await json(s, 'GET', '/api/v1/databases', undefined, tok)).body.databases.map((d: { name: string }) => d.name)).toEqual([DB]);
    expect(await status('other database', sqlPost('/api/v1/query', 'SELECT * FROM copies.memcopy', tok))).toBe('other database: 403');
    const tokens = (await json(s, 'GET', '/api/v1/auth/tokens')).body.tokens as { name: string; is_service: boolean }[];
    expect(tokens.filter((t) => t.is_service).map((t) => t.name).sort()).toEqual(['memory-service', 'remote-memory']);
  });

  test('admins read it and see it listed', async () => {
    const rows = (await json(s, 'POST', '/api/v1/query', { sql: `SELECT content FROM ${DB}.memories WHERE agent_id = 'wall-agent'` })).body.data;
    expect(rows).toEqual([['the secret plan of organization default']]);
    expect((await json(s, 'GET', '/api/v1/databases')).body.databases.map((d: { name: string }) => d.name)).toContain(DB);
  });

  test('the memory service stores, lists and searches', async () => {
    const agent = uid('walled');
    const m = await memory.createMemory({ agent_id: agent, content: 'walls keep tenants apart' });
    expect((await memory.getMemory(m.memory_id)).content).toBe('walls keep tenants apart');
    expect((await memory.listMemories({ agent_id: agent })).memories.map((x) => x.memory_id)).toEqual([m.memory_id]);
    expect((await memory.search({ agent_id: agent, query: 'tenants' })).results.map((x) => x.memory_id)).toEqual([m.memory_id]);
  });

  test('a purge erases on a default install (delete.enabled = false): gone from get, list, search and storage', async () => {
    expect((await json(s, 'GET', '/api/v1/delete/config')).body.enabled).toBe(false);
    const agent = uid('erased');
    const m = await memory.createMemory({ agent_id: agent, content: 'a person asked to be forgotten' });
    // Flushed to a file first, so the purge rewrites a file and not only buffered rows.
    expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBeLessThan(300);
    await memory.deleteMemory(m.memory_id, { purge: true });
    const missing = await memory.getMemory(m.memory_id).then(() => 0, (e: MemoryApiError) => e.status);
    expect(missing).toBe(404);
    expect((await memory.listMemories({ agent_id: agent })).memories).toEqual([]);
    expect((await memory.search({ agent_id: agent, query: 'forgotten' })).results).toEqual([]);
    const stored = (await json(s, 'POST', '/api/v1/query', { sql: `SELECT count(*) FROM ${DB}.memories WHERE memory_id = '${m.memory_id}'` })).body.data;
    expect(stored).toEqual([[0]]);
    // The switch still guards users' deletes, admins' included.
    const del = await json(s, 'POST', '/api/v1/delete', { database: 'copies', measurement: 'memcopy', where: 'true', confirm: true });
    expect(del).toMatchObject({ status: 403, body: { error: 'deleting is disabled: set delete.enabled=true' } });
  });
});

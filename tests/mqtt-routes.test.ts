/** MQTT subscription routes: bodies, validation, codes, auth; no message flow (see mqtt-suite.ts). */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startAedes, waitFor, type TestBroker } from './helpers/mqtt-brokers.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

let s: TestServer;
let broker: TestBroker;
let reader: string;
beforeAll(async () => {
  broker = await startAedes();
  s = await startServer();
  reader = (await json(s, 'POST', '/api/v1/auth/tokens', { name: 'reader' })).body.token;
});
afterAll(async () => {
  await s.cleanup();
  await broker.stop();
});

const base = () => ({ broker: broker.url, topics: ['t/#'], database: 'iot' });
const create = (body: Record<string, unknown>, token?: string) => json(s, 'POST', '/api/v1/mqtt/subscriptions', body, token);

describe('MQTT subscription routes', () => {
  test('create: 201 with the spec body, running by default, defaults filled, password never shown', async () => {
    const r = await create({ ...base(), name: 'one', username: 'u', password: 'pw-never-shown' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'one', broker: broker.url, topics: ['t/#'], database: 'iot', status: 'running', qos: 1, auto_start: true, has_password: true, username: 'u' });
    expect(r.body.id).toMatch(/^mqtt_[0-9a-f]{16}$/);
    expect(r.body.client_id).toMatch(/^svc-[0-9a-f]{12}$/);
    expect(Date.parse(r.body.created_at)).toBeGreaterThan(0);
    expect(JSON.stringify(r.body)).not.toContain('pw-never-shown');
    const got = await json(s, 'GET', `/api/v1/mqtt/subscriptions/${r.body.id}`);
    expect(got.body).not.toHaveProperty('password');
    expect(JSON.stringify(got.body)).not.toContain('pw-never-shown');
    await waitFor('connected', async () => (await json(s, 'GET', `/api/v1/mqtt/subscriptions/${r.body.id}`)).body.connection === 'connected');
  });

  test('create with auto_start false is stopped; list is {subscriptions:[{id,name,broker,status}], count}', async () => {
    const r = await create({ ...base(), name: 'two', auto_start: false, qos: 0, client_id: 'fixed-client' });
    expect(r.body).toMatchObject({ status: 'stopped', qos: 0, client_id: 'fixed-client', has_password: false });
    const list = await json(s, 'GET', '/api/v1/mqtt/subscriptions');
    expect(list.body.count).toBe(list.body.subscriptions.length);
    expect(list.body.subscriptions.find((x: { name: string }) => x.name === 'two')).toEqual({ id: r.body.id, name: 'two', broker: broker.url, status: 'stopped', connected: false });
  });

  test('a taken name or client_id is 409', async () => {
    expect((await create({ ...base(), name: 'one' })).status).toBe(409);
    const dupClient = await create({ ...base(), name: 'three', client_id: 'fixed-client' });
    expect(dupClient.status).toBe(409);
    expect(dupClient.body.error).toContain("client_id 'fixed-client'");
  });

  test.each([
    [{ broker: 'http://x:1883' }, 'broker'],
    [{ broker: 'localhost:1883' }, 'broker'],
    [{ broker: 'tcp://user:pw@host:1883' }, 'credentials'],
    [{ topics: [] }, 'topics'],
    [{ topics: ['a/#/b'] }, 'topics.0'],
    [{ qos: 3 }, 'qos'],
    [{ database: '1bad' }, 'database'],
    [{ database: 'system' }, 'reserved'],
    [{ name: '' }, 'name'],
    [{ topic_mapping: { 'a/+': 'bad/name' } }, 'topic_mapping'],
    [{ tls_ca_path: '/nonexistent/ca.pem', tls_enabled: true }, 'tls_ca_path'],
    [{ tls_ca_path: '/etc/hostname' }, 'TLS is off'],
    [{ reconnect_min_seconds: 10, reconnect_max_seconds: 5 }, 'reconnect_min_seconds'],
    [{ unknown_field: 1 }, 'unknown field'],
  ])('invalid %j is 400 naming %s', async (patch, field) => {
    const r = await create({ ...base(), name: `bad-${Math.random()}`, ...patch });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain(field);
  });

  test('missing required fields are 400 naming them', async () => {
    const r = await create({ name: 'x', broker: broker.url, topics: ['a'] });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('database is required');
  });

  test('mqtt://, mqtts://, ssl://, ws:// broker URLs are accepted', async () => {
    for (const [i, url] of ['mqtt://h:1', 'ssl://h:8883', 'ws://h:8080/mqtt', 'wss://h/mqtt', 'mqtts://h'].entries())
      expect((await create({ ...base(), broker: url, name: `scheme${i}`, auto_start: false })).status).toBe(201);
  });

  test('unknown id is 404 on every route', async () => {
    for (const [method, path] of [['GET', ''], ['PUT', ''], ['DELETE', ''], ['POST', '/start'], ['POST', '/stop'], ['POST', '/restart'], ['GET', '/stats']]) {
      const r = await json(s, method!, `/api/v1/mqtt/subscriptions/nope${path}`, method === 'PUT' ? { qos: 0 } : undefined);
      expect([method, path, r.status]).toEqual([method, path, 404]);
    }
  });

  test('update: fields replaced, others kept, password set and removed, the GET body accepted back', async () => {
    const id = (await create({ ...base(), name: 'upd', auto_start: false, password: 'p1' })).body.id;
    const details = (await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}`)).body;
    const back = await json(s, 'PUT', `/api/v1/mqtt/subscriptions/${id}`, { ...details, topics: ['x/+', 'y/#'] });
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ topics: ['x/+', 'y/#'], has_password: true, qos: 1, name: 'upd' });
    expect((await json(s, 'PUT', `/api/v1/mqtt/subscriptions/${id}`, { password: null })).body.has_password).toBe(false);
    expect((await json(s, 'PUT', `/api/v1/mqtt/subscriptions/${id}`, { name: 'one' })).status).toBe(409);
    expect((await json(s, 'PUT', `/api/v1/mqtt/subscriptions/${id}`, { qos: 5 })).status).toBe(400);
  });

  test('start and stop are idempotent and answer {id, status, message}', async () => {
    const id = (await create({ ...base(), name: 'idem', auto_start: false })).body.id;
    expect((await json(s, 'POST', `/api/v1/mqtt/subscriptions/${id}/stop`)).body).toMatchObject({ id, status: 'stopped', message: 'subscription is already stopped' });
    expect((await json(s, 'POST', `/api/v1/mqtt/subscriptions/${id}/start`)).body).toMatchObject({ id, status: 'running' });
    expect((await json(s, 'POST', `/api/v1/mqtt/subscriptions/${id}/start`)).body).toMatchObject({ id, status: 'running', message: 'subscription is already running' });
    expect((await json(s, 'POST', `/api/v1/mqtt/subscriptions/${id}/stop`)).body).toMatchObject({ id, status: 'stopped', message: 'subscription stopped' });
  });

  test('reads need a token, mutations an admin token', async () => {
    expect((await json(s, 'GET', '/api/v1/mqtt/subscriptions', undefined, null)).status).toBe(401);
    expect((await json(s, 'GET', '/api/v1/mqtt/health', undefined, null)).status).toBe(401);
    expect((await json(s, 'GET', '/api/v1/mqtt/subscriptions', undefined, reader)).status).toBe(200);
    expect((await json(s, 'GET', '/api/v1/mqtt/stats', undefined, reader)).status).toBe(200);
    expect((await json(s, 'GET', '/api/v1/mqtt/health', undefined, reader)).status).toBe(200);
    const id = (await json(s, 'GET', '/api/v1/mqtt/subscriptions')).body.subscriptions[0].id;
    expect((await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}/stats`, undefined, reader)).status).toBe(200);
    expect((await create({ ...base(), name: 'nope' }, reader)).status).toBe(403);
    for (const [method, path] of [['PUT', ''], ['DELETE', ''], ['POST', '/start'], ['POST', '/stop'], ['POST', '/restart']])
      expect((await json(s, method!, `/api/v1/mqtt/subscriptions/${id}${path}`, method === 'PUT' ? {} : undefined, reader)).status).toBe(403);
  });

  test('per-subscription stats record', async () => {
    const id = (await json(s, 'GET', '/api/v1/mqtt/subscriptions')).body.subscriptions[0].id;
    const st = (await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}/stats`)).body;
    expect(st).toMatchObject({ id, messages_received: 0, bytes_received: 0, decode_errors: 0, last_message_at: null, topics: {} });
  });
});

/** MQTT across server restarts (auto_start, desired state) and secrets at rest (encrypted password, key file). */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publisher, startAedes, waitFor, type TestBroker } from './helpers/mqtt-brokers.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

const PASSWORD = 'Plaintext-Broker-Pw-7f3a9c';
let broker: TestBroker;
beforeAll(async () => {
  broker = await startAedes({ authenticate: (user, pass) => user === 'dev' && pass === PASSWORD });
});
afterAll(() => broker.stop());

const detail = async (s: TestServer, id: string) => (await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}`)).body;
const stats = async (s: TestServer, id: string) => (await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}/stats`)).body;

describe('MQTT across server restarts', () => {
  test('auto_start subscriptions come back running, stopped ones stay stopped; the password works and is only stored encrypted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-mqtt-restart-'));
    let s = await startServer({ dir });
    const mk = async (name: string, extra: Record<string, unknown>) => {
      const r = await json(s, 'POST', '/api/v1/mqtt/subscriptions', { name, broker: broker.url, topics: [`${name}/#`], database: 'rs', username: 'dev', password: PASSWORD, reconnect_min_seconds: 0.2, reconnect_max_seconds: 1, ...extra });
      expect(r.status).toBe(201);
      return r.body.id as string;
    };
    const a = await mk('auto', {});
    const b = await mk('manual', { auto_start: false });
    const c = await mk('userstopped', {});
    const wrong = await mk('wrongpw', { password: 'not-the-password' });
    await json(s, 'POST', `/api/v1/mqtt/subscriptions/${b}/start`);
    await json(s, 'POST', `/api/v1/mqtt/subscriptions/${c}/stop`);
    await waitFor('auto connected with the decrypted password', async () => (await detail(s, a)).connected);
    await waitFor('manual connected', async () => (await detail(s, b)).connected);
    // A refused login keeps the subscription running, retrying, with the reason shown.
    await waitFor('wrong password reported', async () => {
      const d = await detail(s, wrong);
      return d.status === 'running' && d.connected === false && /Not authorized|Bad username or password/i.test(d.last_error ?? '');
    });

    // Secrets at rest: neither the database file nor its WAL holds the plaintext; the key file is 0600.
    const dataDir = join(dir, 'data');
    for (const f of readdirSync(dataDir).filter((f) => f.startsWith('svc.db'))) expect(readFileSync(join(dataDir, f)).includes(PASSWORD)).toBe(false);
    const dbBytes = Buffer.concat(readdirSync(dataDir).filter((f) => f.startsWith('svc.db')).map((f) => readFileSync(join(dataDir, f))));
    expect(dbBytes.includes('v1:')).toBe(true);
    expect(statSync(join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(s.output()).not.toContain(PASSWORD);

    expect(await s.stop()).toBe(0);
    s = await startServer({ dir });
    try {
      expect((await detail(s, a)).status).toBe('running');
      expect((await detail(s, b)).status).toBe('stopped'); // auto_start false
      expect((await detail(s, c)).status).toBe('stopped'); // stopped by the user before the restart
      await waitFor('auto reconnected after restart', async () => (await detail(s, a)).connected);
      const pub = await publisher(broker.url, { username: 'dev', password: PASSWORD });
      await pub.publishAsync('auto/temp', JSON.stringify({ v: 1 }), { qos: 1 });
      await waitFor('written after restart', async () => (await stats(s, a)).points_written === 1);
      await pub.endAsync();
      await json(s, 'POST', `/api/v1/mqtt/subscriptions/${wrong}/stop`);
    } finally {
      await s.cleanup();
    }
  });

  test('mqtt.enabled = false: records are managed but nothing connects; enabled again, auto_start brings them up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-mqtt-off-'));
    let s = await startServer({ dir, env: { SVC_MQTT_ENABLED: 'false' } });
    const r = await json(s, 'POST', '/api/v1/mqtt/subscriptions', { name: 'off', broker: broker.url, topics: ['off/#'], database: 'rs', username: 'dev', password: PASSWORD });
    expect(r.status).toBe(201);
    expect(r.body.status).toBe('stopped');
    const start = await json(s, 'POST', `/api/v1/mqtt/subscriptions/${r.body.id}/start`);
    expect(start.status).toBe(409);
    expect(start.body.error).toContain('mqtt.enabled = false');
    expect((await json(s, 'GET', '/api/v1/mqtt/health')).body).toMatchObject({ status: 'disabled', running_count: 0 });
    await s.stop();
    s = await startServer({ dir });
    try {
      await waitFor('auto_start after enabling', async () => (await detail(s, r.body.id)).connected);
    } finally {
      await s.cleanup();
    }
  });

  test('mqtt.encryption_key from config: no key file; a malformed key stops startup with one clear line', async () => {
    const key = Buffer.alloc(32, 9).toString('base64');
    const s = await startServer({ env: { SVC_MQTT_ENCRYPTION_KEY: key } });
    try {
      const r = await json(s, 'POST', '/api/v1/mqtt/subscriptions', { name: 'k', broker: broker.url, topics: ['k/#'], database: 'rs', password: PASSWORD, auto_start: false });
      expect(r.status).toBe(201);
      expect(existsSync(join(s.dir, 'data', 'secret.key'))).toBe(false);
    } finally {
      await s.cleanup();
    }
    const bad = await startServer({ env: { SVC_MQTT_ENCRYPTION_KEY: 'dG9vLXNob3J0' } }).then(
      async (srv) => (await srv.cleanup(), 'started'),
      (err: Error) => err.message,
    );
    expect(bad).toContain('mqtt.encryption_key must be the base64 encoding of 32 bytes');
  });
});

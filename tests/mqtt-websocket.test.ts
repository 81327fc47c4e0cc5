/** A ws:// subscription (MQTT over WebSocket) against aedes behind a WebSocket server. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { publisher, startAedes, waitFor, type TestBroker } from './helpers/mqtt-brokers.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

let broker: TestBroker;
let s: TestServer;
beforeAll(async () => {
  broker = await startAedes({ websocket: true });
  s = await startServer();
});
afterAll(async () => {
  await s.cleanup();
  await broker.stop();
});

test('ws:// broker: connected, points written', async () => {
  const r = await json(s, 'POST', '/api/v1/mqtt/subscriptions', { name: 'ws', broker: broker.url, topics: ['ws/#'], database: 'wsdb' });
  expect(r.status).toBe(201);
  const id = r.body.id;
  await waitFor('connected', async () => (await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}`)).body.connected);
  const pub = await publisher(broker.url);
  await pub.publishAsync('ws/a', JSON.stringify([{ v: 1 }, { v: 2 }]), { qos: 1 });
  await waitFor('written', async () => (await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}/stats`)).body.points_written === 2);
  await pub.endAsync();
  // No password anywhere: no key file is made.
  expect(existsSync(join(s.dir, 'data', 'secret.key'))).toBe(false);
});

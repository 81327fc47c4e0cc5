/** TLS subscriptions against mosquitto with a throwaway CA: server verification and client certificates. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { makePki, mosquittoPath, publisher, startMosquitto, waitFor, type TestBroker, type TestPki } from './helpers/mqtt-brokers.ts';
import { peerMissing } from './helpers/peers.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

const pki = mosquittoPath() ? makePki() : null;

if (!pki) peerMissing('MQTT over TLS', 'mosquitto or openssl is not installed');
else
  describe('MQTT over TLS (mosquitto, client certificate required)', () => {
    let broker: TestBroker;
    let s: TestServer;
    const p = pki as TestPki;
    beforeAll(async () => {
      // `user root`: mosquitto started as root would drop to its own user, which cannot read the temp PKI.
      broker = await startMosquitto(
        `user root\npersistence false\nlistener $PORT 127.0.0.1\nallow_anonymous true\ncafile ${p.ca}\ncertfile ${p.serverCert}\nkeyfile ${p.serverKey}\nrequire_certificate true\n`,
      );
      s = await startServer();
    });
    afterAll(async () => {
      await s?.cleanup();
      await broker?.stop();
    });

    const create = (name: string, extra: Record<string, unknown>) =>
      json(s, 'POST', '/api/v1/mqtt/subscriptions', { name, broker: `ssl://127.0.0.1:${broker.port}`, topics: ['tls/#'], database: 'tls', reconnect_min_seconds: 0.2, reconnect_max_seconds: 1, ...extra });

    test('ssl:// with CA, client certificate and key: connected, points written', async () => {
      const r = await create('mtls', { tls_ca_path: p.ca, tls_cert_path: p.clientCert, tls_key_path: p.clientKey });
      expect(r.status).toBe(201);
      const id = r.body.id;
      await waitFor('tls connected', async () => (await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}`)).body.connected);
      const pub = await publisher(`mqtts://127.0.0.1:${broker.port}`, { ca: readFileSync(p.ca), cert: readFileSync(p.clientCert), key: readFileSync(p.clientKey) });
      await pub.publishAsync('tls/sensor', JSON.stringify({ v: 42 }), { qos: 1 });
      await waitFor('written', async () => (await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}/stats`)).body.points_written === 1);
      await pub.endAsync();
    });

    test('without the client certificate, or without the CA, the subscription keeps retrying and says why', async () => {
      const noCert = (await create('nocert', { tls_ca_path: p.ca })).body.id;
      const noCa = (await create('noca', { tls_enabled: true, tls_cert_path: p.clientCert, tls_key_path: p.clientKey })).body.id;
      for (const id of [noCert, noCa]) {
        await waitFor(`${id} reports its TLS failure`, async () => {
          const d = (await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}`)).body;
          return d.status === 'running' && !d.connected && d.last_error !== null && d.connection !== 'connected';
        });
      }
      const noCaError = (await json(s, 'GET', `/api/v1/mqtt/subscriptions/${noCa}`)).body.last_error;
      expect(noCaError).toMatch(/certificate/i);
      const health = (await json(s, 'GET', '/api/v1/mqtt/health')).body;
      expect(health).toMatchObject({ healthy: false, connected_count: 1, disconnected_count: 2 });
    });
  });

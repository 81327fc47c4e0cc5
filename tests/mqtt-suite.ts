/**
 * The MQTT ingest suite, run against each real broker (aedes in process, mosquitto as a child):
 * QoS 0/1/2 end to end, bad messages, stop/start/restart, broker restart with reconnect.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { pack } from 'msgpackr';
import type { MqttClient } from 'mqtt';
import { publisher, waitFor, type TestBroker } from './helpers/mqtt-brokers.ts';
import { queryFiles } from './helpers/parquet.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

const T0 = 1_700_000_000_000; // ms

/**
 * Registers the suite for one broker kind. `serialQos2`: publish QoS 2 messages one at a time. aedes 1.2
 * loses a PUBREL when several QoS 2 messages are in flight to a persistent-session subscriber (seen with
 * a bare mqtt client too: it sends the PUBREL of another message id twice); mosquitto takes the burst.
 */
export function brokerSuite(label: string, makeBroker: () => Promise<TestBroker>, opts: { serialQos2?: boolean } = {}) {
  describe(`MQTT ingest via ${label}`, () => {
    let broker: TestBroker;
    let s: TestServer;
    let pub: MqttClient;
    const db = `mq_${label}`;

    beforeAll(async () => {
      broker = await makeBroker();
      s = await startServer({ env: { SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' } });
      pub = await publisher(broker.url);
    });
    afterAll(async () => {
      await pub?.endAsync(true).catch(() => {});
      await s?.cleanup();
      await broker?.stop();
    });

    const create = async (body: Record<string, unknown>) => {
      const r = await json(s, 'POST', '/api/v1/mqtt/subscriptions', { broker: broker.url, database: db, reconnect_min_seconds: 0.2, reconnect_max_seconds: 1, ...body });
      expect(r.status).toBe(201);
      return r.body.id as string;
    };
    const stats = async (id: string) => (await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}/stats`)).body;
    const connected = (id: string) => waitFor(`${id} connected`, async () => (await stats(id)).connected === true);
    const flush = async () => expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
    const rows = (m: string, cols: string, tail = '') => queryFiles(s.dir, `SELECT ${cols} FROM $files(${db}/${m}/**/*.parquet) ${tail}`);

    test.each([0, 1, 2] as const)('QoS %i: 20 messages of 5 points each arrive, each point once', async (qos) => {
      const id = await create({ name: `qos${qos}`, topics: [`q${qos}/#`], qos });
      await connected(id);
      for (let m = 0; m < 20; m++) {
        const points = Array.from({ length: 5 }, (_, i) => ({ time: T0 + m * 5 + i, seq: m * 5 + i, dev: `d${i}` }));
        await pub.publishAsync(`q${qos}/load${qos}`, JSON.stringify(points), { qos });
        if (qos === 2 && opts.serialQos2) await waitFor('message written', async () => (await stats(id)).points_written === (m + 1) * 5);
      }
      await waitFor('all points written', async () => (await stats(id)).points_written === 100);
      const st = await stats(id);
      expect(st).toMatchObject({ messages_received: 20, decode_errors: 0, write_errors: 0, topics: { [`q${qos}/load${qos}`]: 20 } });
      expect(st.bytes_received).toBeGreaterThan(20 * 50);
      await flush();
      const [r] = await rows(`load${qos}`, 'count(*)::INT AS n, count(DISTINCT seq)::INT AS d, min(epoch_ms(time))::BIGINT AS t');
      expect(r).toEqual({ n: 100, d: 100, t: BigInt(T0) });
    });

    test('bad messages count as decode errors and never stop the subscription', async () => {
      const id = await create({ name: 'bad', topics: ['bad/#'] });
      await connected(id);
      for (const payload of ['not json {', '{"only":"tags"}', Buffer.from([0x81, 0xa1]), '[]'])
        await pub.publishAsync('bad/x', payload, { qos: 1 });
      await pub.publishAsync('bad/good', pack({ m: 'good', t: T0, tags: { host: 'h' }, fields: { v: 7 } }), { qos: 1 });
      await waitFor('good message written', async () => (await stats(id)).points_written === 1);
      const st = await stats(id);
      expect(st).toMatchObject({ messages_received: 5, decode_errors: 4, status: 'running', connected: true });
      expect(st.last_error).toContain("cannot decode message on 'bad/x'");
      await flush();
      expect(await rows('good', 'host, v')).toEqual([{ host: 'h', v: 7 }]);
      expect(s.output()).toContain('cannot decode message');
    });

    test('points are queryable through POST /api/v1/query before any flush', async () => {
      const id = await create({ name: 'queried', topics: ['qry/#'] });
      await connected(id);
      await pub.publishAsync('qry/climate', JSON.stringify([{ time: T0, temp: 21.5, room: 'a' }, { time: T0 + 1, temp: 22.5, room: 'b' }]), { qos: 1 });
      await waitFor('written', async () => (await stats(id)).points_written === 2);
      const res = await s.fetch('/api/v1/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: `SELECT room, temp FROM ${db}.climate WHERE room = 'b'` }) });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: unknown }).data).toEqual([['b', 22.5]]);
    });

    test('stop, start, restart; update and delete only when stopped; QoS 1 messages sent while stopped wait at the broker', async () => {
      const id = await create({ name: 'cycle', topics: ['cyc/#'], topic_mapping: { 'cyc/+/data': { measurement: 'cycled', tags_from_topic: [{ position: 1, tag_name: 'site' }] } } });
      await connected(id);
      expect((await json(s, 'PUT', `/api/v1/mqtt/subscriptions/${id}`, { qos: 2 })).status).toBe(409);
      const del = await json(s, 'DELETE', `/api/v1/mqtt/subscriptions/${id}`);
      expect(del.status).toBe(409);
      expect(del.body.error).toContain('stop it first');

      expect((await json(s, 'POST', `/api/v1/mqtt/subscriptions/${id}/stop`)).body).toMatchObject({ id, status: 'stopped' });
      expect((await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}`)).body).toMatchObject({ status: 'stopped', connection: 'stopped' });
      // A running subscription to the same topics receives the message: the broker delivered it to every
      // connected subscriber, and the stopped one, were it connected, had it by then. It got nothing.
      const watcher = await create({ name: 'cycle-watch', topics: ['cyc/#'], topic_mapping: { 'cyc/+/data': { measurement: 'cycle_watch' } } });
      await connected(watcher);
      await pub.publishAsync('cyc/s1/data', JSON.stringify({ time: T0, v: 1 }), { qos: 1 });
      await waitFor('the watcher to receive the message', async () => (await stats(watcher)).messages_received === 1);
      expect((await stats(id)).messages_received).toBe(0);
      expect((await json(s, 'POST', `/api/v1/mqtt/subscriptions/${watcher}/stop`)).status).toBe(200);
      expect((await json(s, 'DELETE', `/api/v1/mqtt/subscriptions/${watcher}`)).status).toBe(200);

      const started = await json(s, 'POST', `/api/v1/mqtt/subscriptions/${id}/start`);
      expect(started.body).toMatchObject({ id, status: 'running' });
      expect(typeof started.body.message).toBe('string');
      await waitFor('queued message delivered', async () => (await stats(id)).points_written === 1);

      const restarted = await json(s, 'POST', `/api/v1/mqtt/subscriptions/${id}/restart`);
      expect(restarted.body).toMatchObject({ id, status: 'running' });
      await connected(id);
      await pub.publishAsync('cyc/s2/data', JSON.stringify({ time: T0 + 1, v: 2 }), { qos: 1 });
      await waitFor('after restart', async () => (await stats(id)).points_written === 2);
      await flush();
      expect(await rows('cycled', 'site, v', 'ORDER BY v')).toEqual([{ site: 's1', v: 1 }, { site: 's2', v: 2 }]);

      await json(s, 'POST', `/api/v1/mqtt/subscriptions/${id}/stop`);
      expect((await json(s, 'PUT', `/api/v1/mqtt/subscriptions/${id}`, { qos: 2 })).body).toMatchObject({ qos: 2, status: 'stopped' });
      expect((await json(s, 'DELETE', `/api/v1/mqtt/subscriptions/${id}`)).status).toBe(200);
      expect((await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}`)).status).toBe(404);
    });

    test('broker restart: the subscription reconnects, keeps counting, no point twice at QoS 1', async () => {
      const id = await create({ name: 'survivor', topics: ['surv/#'] });
      await connected(id);
      const send = async (from: number) => {
        for (let i = from; i < from + 10; i++) await pub.publishAsync('surv/points', JSON.stringify({ time: T0 + i, seq: i }), { qos: 1 });
      };
      await send(0);
      await waitFor('first half', async () => (await stats(id)).points_written === 10);

      await pub.endAsync(true);
      await broker.stop();
      await waitFor('reconnecting shown', async () => {
        const d = (await json(s, 'GET', `/api/v1/mqtt/subscriptions/${id}`)).body;
        return d.status === 'running' && d.connection === 'reconnecting';
      });
      const health = (await json(s, 'GET', '/api/v1/mqtt/health')).body;
      expect(health.healthy).toBe(false);
      expect(health.disconnected_count).toBeGreaterThanOrEqual(1);

      await broker.start();
      await connected(id);
      pub = await publisher(broker.url);
      await send(10);
      await waitFor('second half', async () => (await stats(id)).points_written === 20);
      const st = await stats(id);
      expect(st.messages_received).toBe(20);
      expect(st.connects).toBeGreaterThanOrEqual(2);
      await flush();
      expect(await rows('points', 'count(*)::INT AS n, count(DISTINCT seq)::INT AS d')).toEqual([{ n: 20, d: 20 }]);
    });

    test('global stats and health list the subscriptions', async () => {
      const all = (await json(s, 'GET', '/api/v1/mqtt/stats')).body;
      expect(all.status).toBe('success');
      expect(all.running_count).toBeGreaterThanOrEqual(4);
      const qos1 = (await json(s, 'GET', '/api/v1/mqtt/subscriptions')).body.subscriptions.find((x: { name: string }) => x.name === 'qos1');
      expect(all.subscriptions_stats[qos1.id]).toMatchObject({ messages_received: 20, decode_errors: 0 });
      // Every subscription reconnects after the broker restart of the previous test.
      const health = await waitFor('all connected', async () => {
        const h = (await json(s, 'GET', '/api/v1/mqtt/health')).body;
        return h.healthy ? h : null;
      });
      expect(health).toMatchObject({ status: 'healthy', healthy: true, disconnected_count: 0, service: 'mqtt_subscriptions' });
      expect(health.connected_count).toBe(health.running_count);
    });
  });
}

/**
 * MQTT ingest benchmark (`bun bench/mqtt.bench.ts`): how many 100-point JSON messages per second one
 * subscription sustains, end to end (broker -> subscription -> decode -> write path -> buffer).
 * The server runs as a child process; the broker is mosquitto (a separate process) when installed,
 * else aedes in this process (BENCH_BROKER=aedes|mosquitto to choose). A publisher keeps the broker
 * fed; the rate is messages handled / time from the first publish (QoS 0) or from start with a backlog
 * queued at the broker (QoS 1/2) to the last message handled.
 * Also printed: the decode-only ceiling of the same payload in one thread (no broker, no storage).
 *
 * Env: BENCH_MESSAGES (default 20000 per QoS), BENCH_QOS (default "0,1"), BENCH_WAL=1 (write-ahead log on).
 */
import { connectAsync } from 'mqtt';
import { decodeMessage } from '../src/admin/mqtt/index.ts';
import { mosquittoPath, startAedes, startMosquitto, waitFor, type TestBroker } from '../tests/helpers/mqtt-brokers.ts';
import { json, startServer } from '../tests/helpers/server.ts';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 20_000);
const QOS = (process.env.BENCH_QOS ?? '0,1').split(',').map(Number) as (0 | 1 | 2)[];
const POINTS = 100;
const kind = process.env.BENCH_BROKER ?? (mosquittoPath() ? 'mosquitto' : 'aedes');

/** One message: 100 flat points, 2 tags and 5 float fields each, times moving forward. */
function payload(n: number): string {
  const t0 = Date.now() * 1000 + n * POINTS;
  const points = [];
  for (let i = 0; i < POINTS; i++)
    points.push({ time: t0 + i, host: `host_${i % 20}`, region: `r${i % 4}`, usage_user: Math.random() * 100, usage_system: Math.random() * 10, usage_idle: Math.random() * 100, io_wait: Math.random(), load: Math.random() * 4 });
  return JSON.stringify(points);
}

const bodies = Array.from({ length: 64 }, (_, i) => payload(i));
const bytesPerMessage = Buffer.byteLength(bodies[0]!);

// Decode-only ceiling: the subscription's own decoder on the same bytes.
{
  const encoded = bodies.map((b) => new TextEncoder().encode(b));
  const target = { measurement: 'cpu', database: null, tags: [] };
  const n = 5_000;
  const t = performance.now();
  for (let i = 0; i < n; i++) decodeMessage(encoded[i % encoded.length]!, target, Date.now() * 1000);
  const s = (performance.now() - t) / 1000;
  console.log(`decode only: ${Math.round(n / s)} messages/s (${Math.round((n * POINTS) / s)} points/s), ${bytesPerMessage} bytes/message`);
}

const broker: TestBroker =
  kind === 'mosquitto'
    ? // Unlimited queue: mosquitto's default (1000) would drop messages for a subscriber that falls behind.
      await startMosquitto('listener $PORT 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 0\nmax_inflight_messages 0\n')
    : await startAedes();
const server = await startServer({ env: process.env.BENCH_WAL === '1' ? { SVC_WAL_ENABLED: 'true' } : {} });
const pub = await connectAsync(broker.url.replace('tcp:', 'mqtt:'), { reconnectPeriod: 0 });

try {
  for (const qos of QOS) {
    const created = await json(server, 'POST', '/api/v1/mqtt/subscriptions', { name: `bench${qos}`, broker: broker.url, topics: [`bench${qos}/#`], database: 'bench', qos });
    const id = created.body.id as string;
    const stats = async () => (await json(server, 'GET', `/api/v1/mqtt/subscriptions/${id}/stats`)).body;
    await waitFor('subscription connected', async () => (await stats()).connected);

    // QoS 1/2: publish the whole load while the subscription is stopped (its persistent session queues
    // it at the broker), then time the drain: the publisher's own speed does not cap the figure.
    const drain = qos > 0;
    if (drain) await json(server, 'POST', `/api/v1/mqtt/subscriptions/${id}/stop`);
    let start = performance.now();
    // Keep at most 500 publishes unacknowledged by the broker, so the publisher cannot run away.
    let inflight: Promise<unknown>[] = [];
    for (let i = 0; i < MESSAGES; i++) {
      inflight.push(pub.publishAsync(`bench${qos}/cpu`, bodies[i % bodies.length]!, { qos }));
      if (inflight.length >= 500) {
        await Promise.all(inflight);
        inflight = [];
      }
    }
    await Promise.all(inflight);
    if (drain) {
      start = performance.now();
      await json(server, 'POST', `/api/v1/mqtt/subscriptions/${id}/start`);
    }
    const published = performance.now();
    const done = await waitFor('all messages handled', async () => {
      const st = await stats();
      return st.messages_received >= MESSAGES ? st : null;
    }, 600_000);
    const end = performance.now();
    const secs = (end - start) / 1000;
    console.log(
      `${kind} QoS ${qos}${process.env.BENCH_WAL === '1' ? ' (WAL on)' : ''}: ${Math.round(MESSAGES / secs)} messages/s, ${Math.round((done.points_written as number) / secs)} points/s ` +
        `(${MESSAGES} messages of ${POINTS} points, ${(secs).toFixed(1)} s; ${drain ? 'draining a backlog queued at the broker' : `publisher done after ${((published - start) / 1000).toFixed(1)} s`}; ` +
        `decode_errors ${done.decode_errors}, write_errors ${done.write_errors})`,
    );
    await json(server, 'POST', `/api/v1/mqtt/subscriptions/${id}/stop`);
  }
} finally {
  await pub.endAsync(true);
  await server.cleanup();
  await broker.stop();
}
process.exit(0);

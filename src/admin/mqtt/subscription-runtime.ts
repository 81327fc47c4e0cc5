/**
 * One running subscription on the `mqtt` package: connect, subscribe, decode and write each message,
 * reconnect with exponential backoff when the broker goes away. Messages are handled one at a time
 * through the client's `handleMessage` hook, so a QoS 1/2 message is acknowledged only after the write
 * path accepted its points: a crash before that leaves it with the broker, which redelivers it.
 */
import { connect, Store, type IClientOptions, type IPublishPacket, type MqttClient } from 'mqtt';
import type { Logger } from '../../observability/index.ts';
import type { PointWriter, SubscriptionRecord } from './subscription.ts';
import { decodeMessage } from './message-decoder.ts';
import { connectionUrl } from './broker-url.ts';
import type { SubscriptionStats } from './subscription-stats.ts';
import { TopicRouter } from './topic-router.ts';

/** Connection state while the subscription runs; `reconnecting` while the broker is away. */
export type ConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'stopped';

/**
 * The client side of an MQTT session: QoS 2 messages acknowledged with PUBREC but not yet released.
 * Kept across reconnects and stop/start, so a PUBREL the broker sends later still finds its message.
 */
export interface SessionStores {
  incomingStore: Store;
  outgoingStore: Store;
}

/** Fresh session stores for a subscription. */
export function newSessionStores(): SessionStores {
  // clean: false — the client's end() must not wipe them: the next client of this subscription reuses them.
  return { incomingStore: new Store({ clean: false }), outgoingStore: new Store({ clean: false }) };
}

/** What a runtime needs besides its record. */
export interface RuntimeDeps {
  session: SessionStores;
  write: PointWriter;
  logger: Logger;
  stats: SubscriptionStats;
  password: string | null;
  tls: { ca?: Buffer; cert?: Buffer; key?: Buffer };
}

const STOP_GRACE_MS = 5_000;
const RETRY_WRITE_MAX_MS = 2_000;
const LOG_EVERY_MS = 5_000;

/** A live MQTT client for one subscription record. */
export class SubscriptionRuntime {
  state: ConnectionState = 'connecting';
  private client: MqttClient | null = null;
  private stopping = false;
  private attempts = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private inflight: Promise<void> | null = null;
  private readonly router: TopicRouter;
  private lastLogAt = 0;
  private suppressed = 0;

  constructor(
    private readonly record: SubscriptionRecord,
    private readonly deps: RuntimeDeps,
  ) {
    this.router = new TopicRouter(record.topic_mapping);
  }

  /** Opens the connection; returns at once (connecting and reconnecting happen in the background). */
  start(): void {
    const r = this.record;
    const options: IClientOptions = {
      clientId: r.client_id,
      username: r.username ?? undefined,
      password: this.deps.password ?? undefined,
      // A persistent session keeps QoS 1/2 messages for us at the broker while we are away.
      clean: r.qos === 0,
      keepalive: r.keep_alive_seconds,
      connectTimeout: r.connect_timeout_seconds * 1000,
      reconnectPeriod: 0, // backoff is ours: the package only knows a fixed period
      protocolVersion: 4,
      ...this.deps.tls,
      ...this.deps.session,
      rejectUnauthorized: true,
    };
    const client = connect(connectionUrl(r.broker, r.tls_enabled), options);
    this.client = client;
    client.handleMessage = (packet, done) => this.handle(packet as IPublishPacket, done);
    client.on('connect', () => this.onConnect(client));
    client.on('close', () => this.onClose());
    client.on('error', (err) => this.noteError(`connection: ${err.message}`));
  }

  /** Closes the connection after the message in hand is written; no write happens after it resolves. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.state = 'stopped';
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    if (!client) return;
    if (this.inflight) await Promise.race([this.inflight, Bun.sleep(STOP_GRACE_MS)]);
    const graceful = client.endAsync(false).then(() => true);
    if (!(await Promise.race([graceful, Bun.sleep(2_000).then(() => false)]))) await client.endAsync(true);
  }

  private onConnect(client: MqttClient): void {
    const r = this.record;
    client.subscribe(
      Object.fromEntries(r.topics.map((t) => [t, { qos: r.qos }])),
      (err, granted) => {
        if (this.stopping) return;
        const refused = (granted ?? []).filter((g) => g.qos === 128).map((g) => g.topic);
        if (err || refused.length > 0) {
          this.noteError(`cannot subscribe: ${err ? err.message : `broker refused ${refused.join(', ')}`}`);
          if (err) return;
        }
        this.attempts = 0;
        this.state = 'connected';
        this.deps.stats.connects++;
        this.deps.logger.info('mqtt subscription connected', { subscription: r.name, broker: r.broker, topics: r.topics });
      },
    );
  }

  private onClose(): void {
    if (this.stopping || this.reconnectTimer) return;
    if (this.state === 'connected') this.deps.logger.warn('mqtt broker connection lost; reconnecting', { subscription: this.record.name, broker: this.record.broker });
    this.state = 'reconnecting';
    const r = this.record;
    const base = Math.min(r.reconnect_max_seconds, r.reconnect_min_seconds * 2 ** Math.min(this.attempts, 30)) * 1000;
    const delay = base * (0.8 + Math.random() * 0.4); // jitter: many subscriptions must not reconnect in lockstep
    this.attempts++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (!this.stopping) this.client?.reconnect(this.deps.session);
    }, delay);
  }

  private handle(packet: IPublishPacket, done: (err?: Error) => void): void {
    // While stopping, leave the message unacknowledged: the broker keeps it (QoS 1/2) for the next session.
    if (this.stopping) return;
    this.inflight = this.process(packet)
      .catch((err: Error) => {
        // A bug must not stall the subscription silently: report it and move on.
        this.noteError(`cannot handle message on '${packet.topic}': ${err.message}`);
        return true;
      })
      .then((handled) => {
        this.inflight = null;
        if (handled) done();
      });
  }

  /** Decodes and writes one message; false only when stopping interrupted it (it must stay unacknowledged). */
  private async process(packet: IPublishPacket): Promise<boolean> {
    const { stats } = this.deps;
    const payload = packet.payload as Buffer;
    stats.received(packet.topic, payload.length);
    const target = this.router.resolve(packet.topic);
    let batches;
    try {
      batches = decodeMessage(payload, target, Date.now() * 1000);
    } catch (err) {
      stats.decodeErrors++;
      this.noteError(`cannot decode message on '${packet.topic}': ${(err as Error).message}`);
      return true; // acknowledged: a broken message redelivered forever would block the subscription
    }
    const database = target.database ?? this.record.database;
    const points = batches.reduce((n, b) => n + b.length, 0);
    for (let wait = 50; ; wait = Math.min(wait * 2, RETRY_WRITE_MAX_MS)) {
      try {
        await this.deps.write(database, batches);
        stats.pointsWritten += points;
        return true;
      } catch (err) {
        // Backpressure means "later", not "never": hold the message (and the broker's queue) and retry.
        if ((err as { kind?: string }).kind === 'unavailable') {
          if (this.stopping) return false;
          await Bun.sleep(wait);
          continue;
        }
        stats.writeErrors++;
        this.noteError(`cannot write ${points} points from '${packet.topic}' to database '${database}': ${(err as Error).message}`);
        return true;
      }
    }
  }

  /** Records a problem in the stats and logs it, at most once per LOG_EVERY_MS (a flood of bad messages must not flood the log). */
  private noteError(message: string): void {
    this.deps.stats.error(message);
    const now = Date.now();
    if (now - this.lastLogAt < LOG_EVERY_MS) {
      this.suppressed++;
      return;
    }
    this.deps.logger.warn(message, { subscription: this.record.name, similar_messages_suppressed: this.suppressed });
    this.lastLogAt = now;
    this.suppressed = 0;
  }
}

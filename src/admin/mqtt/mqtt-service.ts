/**
 * MQTT subscriptions: records, the running/stopped state machine, and their runtimes. A subscription is
 * `running` exactly while it has a runtime; update and delete require `stopped`. Transitions of one
 * subscription are serialized, so a stop racing a restart cannot leave two clients on one client id.
 */
import { randomId } from '../../lib/crypto.ts';
import { AppError, conflict, messageOf, notFound, StartupError } from '../../lib/errors.ts';
import type { Logger } from '../../observability/index.ts';
import { accessDenied, assertAllowed, isReadable, UNRESTRICTED, type TableAccess } from '../../lib/table-access.ts';
import type { SecretBox } from './secret-box.ts';
import type { CreateSubscriptionInput, UpdateSubscriptionInput } from './subscription-schema.ts';
import { checkSettings, readTlsFiles, settingsFromCreate, settingsFromUpdate } from './subscription-settings.ts';
import { newSessionStores, SubscriptionRuntime, type SessionStores } from './subscription-runtime.ts';
import { SubscriptionStats, type SubscriptionStatsView } from './subscription-stats.ts';
import type { SubscriptionStore } from './subscription-store.ts';
import type { PointWriter, SubscriptionRecord, SubscriptionSettings } from './subscription.ts';
import { detailsView, summaryView, type LiveState, type SubscriptionDetails } from './subscription-views.ts';

/** What the service is built from (main.ts). */
export interface MqttServiceDeps {
  store: SubscriptionStore;
  secrets: SecretBox;
  write: PointWriter;
  logger: Logger;
  /** `mqtt.enabled`: when false, records can be managed but nothing connects. */
  enabled: boolean;
}

/** Answer of start, stop and restart. */
export interface TransitionResult {
  id: string;
  status: 'running' | 'stopped';
  message: string;
}

/** Owns every subscription's lifecycle. */
export class MqttService {
  private readonly runtimes = new Map<string, SubscriptionRuntime>();
  private readonly stats = new Map<string, SubscriptionStats>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly sessions = new Map<string, SessionStores>();
  private readonly logger: Logger;

  constructor(private readonly deps: MqttServiceDeps) {
    this.logger = deps.logger.child({ component: 'mqtt' });
  }

  /** Every subscription whose database `access` may read, as `{id, name, broker, status, connected}`. */
  list(access: TableAccess) {
    return this.deps.store.list().filter((r) => isReadable(access, r.database, null)).map((r) => summaryView(r, this.live(r.id)));
  }

  /** 404 when unknown or when `access` may not read the subscription's database (see record). */
  assertVisible(id: string, access: TableAccess): void {
    this.record(id, access);
  }

  /** One subscription's details; 404 when unknown. */
  get(id: string): SubscriptionDetails {
    return detailsView(this.record(id), this.live(id));
  }

  /** Creates a subscription (409 on a taken name) and starts it when auto_start is on. */
  async create(input: CreateSubscriptionInput, access: TableAccess): Promise<SubscriptionDetails> {
    const settings = settingsFromCreate(input);
    this.checkUnique(settings, null);
    checkSettings(settings);
    checkWritable(settings, access);
    const now = new Date().toISOString();
    const id = `mqtt_${randomId(8)}`;
    const desired = settings.auto_start ? 'running' : 'stopped';
    const record: SubscriptionRecord = { ...settings, id, password_enc: null, desired_status: desired, created_at: now, updated_at: now };
    if (input.password) record.password_enc = this.seal(input.password, id);
    this.deps.store.insert(record);
    this.logger.info('mqtt subscription created', { subscription: record.name, id });
    if (desired === 'running' && this.deps.enabled) {
      // The record is saved either way; a start failure shows as status stopped with last_error.
      await this.start(id).catch((err: Error) => {
        this.statsFor(id).error(err.message);
        this.logger.error('cannot start mqtt subscription', { subscription: record.name, error: err.message });
      });
    }
    return this.get(id);
  }

  /** Replaces the fields given; 409 unless stopped. `password: null` removes the password. */
  async update(id: string, input: UpdateSubscriptionInput, access: TableAccess): Promise<SubscriptionDetails> {
    return this.serialized(id, () => {
      const current = this.record(id);
      this.requireStopped(current, 'update');
      const settings = settingsFromUpdate(current, input);
      this.checkUnique(settings, id);
      checkSettings(settings);
      checkWritable(settings, access);
      const next: SubscriptionRecord = { ...current, ...settings, updated_at: new Date().toISOString() };
      if (input.password === null || input.password === '') next.password_enc = null;
      else if (input.password !== undefined) next.password_enc = this.seal(input.password, id);
      this.deps.store.update(next);
      this.sessions.delete(id); // new settings (client id, qos, broker): a new session
      return this.get(id);
    });
  }

  /** Deletes a stopped subscription; 409 while running. */
  async delete(id: string): Promise<void> {
    await this.serialized(id, () => {
      this.requireStopped(this.record(id), 'delete');
      this.deps.store.delete(id);
      this.stats.delete(id);
      this.sessions.delete(id);
    });
  }

  /** stopped -> running (idempotent). Connecting happens in the background; `connection` tells how it goes. */
  async start(id: string): Promise<TransitionResult> {
    return this.serialized(id, () => {
      const r = this.record(id);
      if (this.runtimes.has(id)) return { id, status: 'running' as const, message: 'subscription is already running' };
      this.launch(r);
      this.deps.store.setDesiredStatus(id, 'running');
      return { id, status: 'running' as const, message: `subscription started; connecting to ${r.broker}` };
    });
  }

  /** running -> stopped (idempotent); resolves once the client is closed and nothing more is written. */
  async stop(id: string): Promise<TransitionResult> {
    return this.serialized(id, async () => {
      this.record(id);
      this.deps.store.setDesiredStatus(id, 'stopped');
      const rt = this.runtimes.get(id);
      if (!rt) return { id, status: 'stopped' as const, message: 'subscription is already stopped' };
      this.runtimes.delete(id);
      await rt.stop();
      this.logger.info('mqtt subscription stopped', { id });
      return { id, status: 'stopped' as const, message: 'subscription stopped' };
    });
  }

  /** Stop (if running) then start. */
  async restart(id: string): Promise<TransitionResult> {
    return this.serialized(id, async () => {
      const r = this.record(id);
      const rt = this.runtimes.get(id);
      if (rt) {
        this.runtimes.delete(id);
        await rt.stop();
      }
      this.launch(r);
      this.deps.store.setDesiredStatus(id, 'running');
      return { id, status: 'running' as const, message: `subscription restarted; connecting to ${r.broker}` };
    });
  }

  /** The statistics record of one subscription; 404 when unknown. */
  statsOf(id: string): SubscriptionStatsView & { status: string; connection: string; connected: boolean } {
    this.record(id);
    const live = this.live(id);
    return { ...this.statsFor(id).view(), status: live.status, connection: live.connection, connected: live.connection === 'connected' };
  }

  /** `{status, running_count, subscriptions_stats}` over every subscription. */
  allStats(access: TableAccess) {
    const subscriptions_stats: Record<string, SubscriptionStatsView> = {};
    for (const r of this.deps.store.list()) if (isReadable(access, r.database, null)) subscriptions_stats[r.id] = this.statsFor(r.id).view();
    return { status: 'success', running_count: this.runtimes.size, subscriptions_stats };
  }

  /** `{status, healthy, running_count, connected_count, disconnected_count, service}`: healthy while every running subscription is connected. */
  health() {
    let connected = 0;
    for (const rt of this.runtimes.values()) if (rt.state === 'connected') connected++;
    const disconnected = this.runtimes.size - connected;
    const status = !this.deps.enabled ? 'disabled' : disconnected === 0 ? 'healthy' : 'degraded';
    return { status, healthy: disconnected === 0, running_count: this.runtimes.size, connected_count: connected, disconnected_count: disconnected, service: 'mqtt_subscriptions' };
  }

  /** At server start: brings up subscriptions with auto_start whose last requested state was running. A failure is logged, never fatal. */
  async startAll(): Promise<number> {
    if (!this.deps.enabled) return 0;
    let started = 0;
    for (const r of this.deps.store.list()) {
      if (!r.auto_start || r.desired_status !== 'running') continue;
      try {
        await this.start(r.id);
        started++;
      } catch (err) {
        this.statsFor(r.id).error((err as Error).message);
        this.logger.error('cannot start mqtt subscription', { subscription: r.name, error: (err as Error).message });
      }
    }
    return started;
  }

  /** At shutdown: closes every client (their desired state is kept, so they come back on restart). */
  async stopAll(): Promise<void> {
    const all = [...this.runtimes.values()];
    this.runtimes.clear();
    await Promise.all(all.map((rt) => rt.stop()));
  }

  private launch(r: SubscriptionRecord): void {
    if (!this.deps.enabled) throw conflict('cannot start subscription: MQTT is disabled (mqtt.enabled = false)');
    let password: string | null = null;
    try {
      password = r.password_enc === null ? null : this.deps.secrets.open(r.password_enc, r.id);
    } catch (err) {
      throw new AppError('internal', `cannot start subscription '${r.name}': ${(err as Error).message}`);
    }
    const tls = readTlsFiles(r);
    let session = this.sessions.get(r.id);
    if (!session) this.sessions.set(r.id, (session = newSessionStores()));
    const rt = new SubscriptionRuntime(r, { write: this.deps.write, logger: this.logger, stats: this.statsFor(r.id), password, tls, session });
    rt.start();
    this.runtimes.set(r.id, rt);
  }

  private seal(password: string, id: string): string {
    try {
      return this.deps.secrets.seal(password, id);
    } catch (err) {
      throw new AppError('internal', `cannot encrypt password: ${err instanceof StartupError ? err.detail : messageOf(err)}`);
    }
  }

  /** The record; 404 when unknown, and also when `access` may not read its database: a 403 would name it. */
  private record(id: string, access: TableAccess = UNRESTRICTED): SubscriptionRecord {
    const r = this.deps.store.get(id);
    if (!r || !isReadable(access, r.database, null)) throw notFound(`mqtt subscription '${id}' not found`);
    return r;
  }

  private live(id: string): LiveState {
    const rt = this.runtimes.get(id);
    return { status: rt ? 'running' : 'stopped', connection: rt ? rt.state : 'stopped', lastError: this.stats.get(id)?.lastError ?? null };
  }

  private statsFor(id: string): SubscriptionStats {
    let s = this.stats.get(id);
    if (!s) this.stats.set(id, (s = new SubscriptionStats(id)));
    return s;
  }

  private requireStopped(r: SubscriptionRecord, action: string): void {
    if (this.runtimes.has(r.id))
      throw conflict(`cannot ${action} subscription '${r.name}': it is running; stop it first (POST /api/v1/mqtt/subscriptions/${r.id}/stop)`);
  }

  private checkUnique(s: SubscriptionSettings, selfId: string | null): void {
    for (const other of this.deps.store.list()) {
      if (other.id === selfId) continue;
      if (other.name === s.name) throw conflict(`cannot save subscription: the name '${s.name}' is taken`);
      // Two clients with one id make the broker drop each in turn, forever.
      if (other.client_id === s.client_id) throw conflict(`cannot save subscription: client_id '${s.client_id}' is used by subscription '${other.name}'`);
    }
  }

  private serialized<T>(id: string, fn: () => T | Promise<T>): Promise<T> {
    const prev = this.locks.get(id) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const settled = next.catch(() => undefined);
    this.locks.set(id, settled);
    void settled.then(() => {
      if (this.locks.get(id) === settled) this.locks.delete(id);
    });
    return next;
  }
}

/**
 * 403 unless `access` may write where the subscription writes: its database (measurements named by
 * unmapped topics are not known in advance) and every measurement its topic mapping names.
 */
function checkWritable(s: SubscriptionSettings, access: TableAccess): void {
  if (!access.allowsDatabase('write', s.database)) throw accessDenied('write', s.database, '*');
  for (const target of Object.values(s.topic_mapping)) {
    const rule = typeof target === 'string' ? { measurement: target } : target;
    assertAllowed(access, 'write', rule.database ?? s.database, [rule.measurement]);
  }
}

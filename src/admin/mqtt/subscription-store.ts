/** Persistence of MQTT subscriptions in the metadata database (table from migration 0004_mqtt_subscriptions). */
import type { CatalogDb } from '../../catalog/index.ts';
import type { SubscriptionRecord, SubscriptionStatus, TopicMappingValue } from './subscription.ts';

interface Row {
  id: string;
  name: string;
  broker: string;
  topics: string;
  database: string;
  qos: number;
  client_id: string;
  username: string | null;
  password_enc: string | null;
  tls_enabled: number;
  tls_cert_path: string | null;
  tls_key_path: string | null;
  tls_ca_path: string | null;
  topic_mapping: string;
  keep_alive_seconds: number;
  connect_timeout_seconds: number;
  reconnect_min_seconds: number;
  reconnect_max_seconds: number;
  auto_start: number;
  desired_status: string;
  created_at: string;
  updated_at: string;
}

const COLUMNS = [
  'id', 'name', 'broker', 'topics', 'database', 'qos', 'client_id', 'username', 'password_enc', 'tls_enabled',
  'tls_cert_path', 'tls_key_path', 'tls_ca_path', 'topic_mapping', 'keep_alive_seconds', 'connect_timeout_seconds',
  'reconnect_min_seconds', 'reconnect_max_seconds', 'auto_start', 'desired_status', 'created_at', 'updated_at',
] as const;

const toRecord = (r: Row): SubscriptionRecord => ({
  ...r,
  topics: JSON.parse(r.topics) as string[],
  qos: r.qos as 0 | 1 | 2,
  tls_enabled: r.tls_enabled === 1,
  topic_mapping: JSON.parse(r.topic_mapping) as Record<string, TopicMappingValue>,
  auto_start: r.auto_start === 1,
  desired_status: r.desired_status as SubscriptionStatus,
});

const toParams = (s: SubscriptionRecord) =>
  [
    s.id, s.name, s.broker, JSON.stringify(s.topics), s.database, s.qos, s.client_id, s.username, s.password_enc,
    s.tls_enabled ? 1 : 0, s.tls_cert_path, s.tls_key_path, s.tls_ca_path, JSON.stringify(s.topic_mapping),
    s.keep_alive_seconds, s.connect_timeout_seconds, s.reconnect_min_seconds, s.reconnect_max_seconds,
    s.auto_start ? 1 : 0, s.desired_status, s.created_at, s.updated_at,
  ] as const;

/** CRUD over the `mqtt_subscriptions` table. */
export class SubscriptionStore {
  constructor(private readonly db: CatalogDb) {}

  /** All subscriptions, oldest first. */
  list(): SubscriptionRecord[] {
    return this.db.query<Row, []>('SELECT * FROM mqtt_subscriptions ORDER BY created_at, id').all().map(toRecord);
  }

  /** One subscription by id, or null. */
  get(id: string): SubscriptionRecord | null {
    const r = this.db.query<Row, [string]>('SELECT * FROM mqtt_subscriptions WHERE id = ?').get(id);
    return r ? toRecord(r) : null;
  }

  /** One subscription by name, or null. */
  byName(name: string): SubscriptionRecord | null {
    const r = this.db.query<Row, [string]>('SELECT * FROM mqtt_subscriptions WHERE name = ?').get(name);
    return r ? toRecord(r) : null;
  }

  /** Inserts a new subscription; throws on a duplicate name (UNIQUE constraint). */
  insert(s: SubscriptionRecord): void {
    this.db
      .prepare(`INSERT INTO mqtt_subscriptions (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`)
      .run(...toParams(s));
  }

  /** Replaces every column of an existing subscription. */
  update(s: SubscriptionRecord): void {
    const sets = COLUMNS.slice(1).map((c) => `${c} = ?`).join(', ');
    const [id, ...rest] = toParams(s);
    this.db.prepare(`UPDATE mqtt_subscriptions SET ${sets} WHERE id = ?`).run(...rest, id);
  }

  /** Records the state the user asked for, which a server restart restores. */
  setDesiredStatus(id: string, status: SubscriptionStatus): void {
    this.db.prepare('UPDATE mqtt_subscriptions SET desired_status = ? WHERE id = ?').run(status, id);
  }

  /** Removes a subscription; true when it existed. */
  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM mqtt_subscriptions WHERE id = ?').run(id).changes === 1;
  }
}

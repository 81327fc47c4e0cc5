/** The MQTT subscription record and the port through which decoded points reach the write path. */
import type { ColumnBatch } from '../../ingest/index.ts';

/** Writes points through the normal write path (validate names, register the database, WAL append, buffer). */
export type PointWriter = (database: string, batches: ColumnBatch[]) => Promise<void>;

/** The state machine's two values: `running` while the subscription is active, whatever its connection. */
export type SubscriptionStatus = 'running' | 'stopped';

/** Where a topic's points go: the measurement, an optional other database, and tags taken from topic levels. */
export interface TopicRule {
  measurement: string;
  database?: string;
  tags_from_topic?: { position: number; tag_name: string }[];
}

/** A topic_mapping value as users write it: a bare measurement name, or a rule. */
export type TopicMappingValue = string | TopicRule;

/** Connection options shared by create, update and the stored record. */
export interface SubscriptionSettings {
  name: string;
  broker: string;
  topics: string[];
  database: string;
  qos: 0 | 1 | 2;
  client_id: string;
  username: string | null;
  tls_enabled: boolean;
  tls_cert_path: string | null;
  tls_key_path: string | null;
  tls_ca_path: string | null;
  topic_mapping: Record<string, TopicMappingValue>;
  keep_alive_seconds: number;
  connect_timeout_seconds: number;
  reconnect_min_seconds: number;
  reconnect_max_seconds: number;
  auto_start: boolean;
}

/** A stored subscription. The password exists here only as ciphertext. */
export interface SubscriptionRecord extends SubscriptionSettings {
  id: string;
  /** AES-256-GCM ciphertext of the password (`v1:` format of SecretBox), or null. */
  password_enc: string | null;
  /** The state the user last asked for; a server restart brings back `running` ones that have auto_start. */
  desired_status: SubscriptionStatus;
  created_at: string;
  updated_at: string;
}

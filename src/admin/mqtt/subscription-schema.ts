/** Request bodies of the subscription routes, as zod schemas: every rule that needs no I/O lives here. */
import { z } from 'zod';
import { databaseNameProblem, measurementNameProblem } from '../../lib/names.ts';
import { topicFilterProblem } from './topic-filter.ts';

/** Broker URL schemes: the spec's three, plus the spellings the mqtt package and other clients use. */
export const BROKER_SCHEMES = ['tcp', 'ssl', 'ws', 'mqtt', 'mqtts', 'tls', 'wss'] as const;
/** Schemes that always mean TLS. */
export const TLS_SCHEMES = new Set(['ssl', 'mqtts', 'tls', 'wss']);

/** Why `broker` is not an accepted broker URL, or null. */
export function brokerProblem(broker: string): string | null {
  let url: URL;
  try {
    url = new URL(broker);
  } catch {
    return `'${broker}' is not a URL; use tcp://host:1883, ssl://host:8883 or ws://host:8080/mqtt`;
  }
  const scheme = url.protocol.replace(/:$/, '');
  if (!(BROKER_SCHEMES as readonly string[]).includes(scheme))
    return `scheme '${scheme}://' is not supported; use tcp://, ssl:// or ws:// (also mqtt://, mqtts://, tls://, wss://)`;
  if (url.hostname === '') return 'the URL names no host';
  // The URL is stored and shown as is; credentials belong in username and password (encrypted).
  if (url.username !== '' || url.password !== '') return 'put credentials in username and password, not in the URL';
  return null;
}

const check = (problem: (v: string) => string | null) => (v: string, ctx: z.RefinementCtx) => {
  const p = problem(v);
  if (p) ctx.addIssue({ code: 'custom', message: p });
};

const databaseName = z.string().superRefine(check(databaseNameProblem));
const measurementName = z.string().superRefine(check(measurementNameProblem));
const topicFilter = z.string().superRefine(check(topicFilterProblem));
const optionalText = z.string().max(4096).nullable().optional();

const topicRule = z.strictObject({
  measurement: measurementName,
  database: databaseName.optional(),
  tags_from_topic: z
    .array(z.strictObject({ position: z.number().int().min(0).max(1000), tag_name: z.string().min(1).max(256) }))
    .max(64)
    .optional(),
});

const topicMapping = z.record(topicFilter, z.union([measurementName, topicRule])).superRefine((m, ctx) => {
  if (Object.keys(m).length > 1000) ctx.addIssue({ code: 'custom', message: 'at most 1000 entries' });
});

const fields = {
  name: z.string().trim().min(1, 'must not be empty').max(128),
  broker: z.string().trim().superRefine(check(brokerProblem)),
  topics: z.array(topicFilter).min(1, 'must list at least one topic').max(100),
  database: databaseName,
  qos: z.union([z.literal(0), z.literal(1), z.literal(2)], { message: 'must be 0, 1 or 2' }),
  client_id: z.string().trim().min(1).max(128),
  username: optionalText,
  password: optionalText,
  tls_enabled: z.boolean(),
  tls_cert_path: optionalText,
  tls_key_path: optionalText,
  tls_ca_path: optionalText,
  topic_mapping: topicMapping,
  keep_alive_seconds: z.number().int().min(0).max(65535),
  connect_timeout_seconds: z.number().min(1).max(300),
  reconnect_min_seconds: z.number().min(0.1).max(3600),
  reconnect_max_seconds: z.number().min(0.1).max(3600),
  auto_start: z.boolean(),
};

/** POST /api/v1/mqtt/subscriptions: name, broker, topics and database are required. */
export const createSubscriptionBody = z.strictObject({
  name: fields.name,
  broker: fields.broker,
  topics: fields.topics,
  database: fields.database,
  qos: fields.qos.optional(),
  client_id: fields.client_id.optional(),
  username: fields.username,
  password: fields.password,
  tls_enabled: fields.tls_enabled.optional(),
  tls_cert_path: fields.tls_cert_path,
  tls_key_path: fields.tls_key_path,
  tls_ca_path: fields.tls_ca_path,
  topic_mapping: fields.topic_mapping.optional(),
  keep_alive_seconds: fields.keep_alive_seconds.optional(),
  connect_timeout_seconds: fields.connect_timeout_seconds.optional(),
  reconnect_min_seconds: fields.reconnect_min_seconds.optional(),
  reconnect_max_seconds: fields.reconnect_max_seconds.optional(),
  auto_start: fields.auto_start.optional(),
});

/** A validated create request. */
export type CreateSubscriptionInput = z.output<typeof createSubscriptionBody>;

/**
 * PUT /api/v1/mqtt/subscriptions/:id: every field optional; present fields replace, absent ones stay.
 * `password: null` removes the password. Read-only fields of the details view are accepted and ignored,
 * so a client may send back what GET returned.
 */
export const updateSubscriptionBody = z.strictObject({
  ...createSubscriptionBody.partial().shape,
  id: z.unknown().optional(),
  status: z.unknown().optional(),
  created_at: z.unknown().optional(),
  updated_at: z.unknown().optional(),
  has_password: z.unknown().optional(),
  connection: z.unknown().optional(),
  connected: z.unknown().optional(),
  last_error: z.unknown().optional(),
});

/** A validated update request. */
export type UpdateSubscriptionInput = z.output<typeof updateSubscriptionBody>;

/** Create and update requests -> complete settings, with the rules that span fields or touch files. */
import { accessSync, constants, readFileSync } from 'node:fs';
import { randomId } from '../../lib/crypto.ts';
import { invalid } from '../../lib/errors.ts';
import { usesTls } from './broker-url.ts';
import type { CreateSubscriptionInput, UpdateSubscriptionInput } from './subscription-schema.ts';
import type { SubscriptionRecord, SubscriptionSettings } from './subscription.ts';

const TLS_FILES = ['tls_ca_path', 'tls_cert_path', 'tls_key_path'] as const;

const orNull = (v: string | null | undefined) => (v === undefined || v === null || v.trim() === '' ? null : v);

/** Settings of a new subscription: spec defaults (qos 1, auto_start true), a generated client id. */
export function settingsFromCreate(b: CreateSubscriptionInput): SubscriptionSettings {
  return {
    name: b.name,
    broker: b.broker,
    topics: b.topics,
    database: b.database,
    qos: b.qos ?? 1,
    // Stable across restarts, so a persistent session (QoS 1/2) is resumed rather than abandoned.
    client_id: b.client_id ?? `svc-${randomId(6)}`,
    username: orNull(b.username),
    tls_enabled: b.tls_enabled ?? false,
    tls_cert_path: orNull(b.tls_cert_path),
    tls_key_path: orNull(b.tls_key_path),
    tls_ca_path: orNull(b.tls_ca_path),
    topic_mapping: b.topic_mapping ?? {},
    keep_alive_seconds: b.keep_alive_seconds ?? 60,
    connect_timeout_seconds: b.connect_timeout_seconds ?? 30,
    reconnect_min_seconds: b.reconnect_min_seconds ?? 1,
    reconnect_max_seconds: b.reconnect_max_seconds ?? 60,
    auto_start: b.auto_start ?? true,
  };
}

/** `r` with the fields present in `b` replaced; absent fields keep their value. */
export function settingsFromUpdate(r: SubscriptionRecord, b: UpdateSubscriptionInput): SubscriptionSettings {
  const pick = <K extends keyof SubscriptionSettings>(k: K): SubscriptionSettings[K] =>
    (b as Partial<SubscriptionSettings>)[k] === undefined ? r[k] : ((b as Partial<SubscriptionSettings>)[k] as SubscriptionSettings[K]);
  return {
    name: pick('name'),
    broker: pick('broker'),
    topics: pick('topics'),
    database: pick('database'),
    qos: pick('qos'),
    client_id: pick('client_id'),
    username: b.username === undefined ? r.username : orNull(b.username),
    tls_enabled: pick('tls_enabled'),
    tls_cert_path: b.tls_cert_path === undefined ? r.tls_cert_path : orNull(b.tls_cert_path),
    tls_key_path: b.tls_key_path === undefined ? r.tls_key_path : orNull(b.tls_key_path),
    tls_ca_path: b.tls_ca_path === undefined ? r.tls_ca_path : orNull(b.tls_ca_path),
    topic_mapping: pick('topic_mapping'),
    keep_alive_seconds: pick('keep_alive_seconds'),
    connect_timeout_seconds: pick('connect_timeout_seconds'),
    reconnect_min_seconds: pick('reconnect_min_seconds'),
    reconnect_max_seconds: pick('reconnect_max_seconds'),
    auto_start: pick('auto_start'),
  };
}

/** Throws a 400 naming the field when settings contradict each other or a TLS file cannot be read. */
export function checkSettings(s: SubscriptionSettings): void {
  if (s.reconnect_min_seconds > s.reconnect_max_seconds) throw invalid('reconnect_min_seconds: must not exceed reconnect_max_seconds');
  if ((s.tls_cert_path === null) !== (s.tls_key_path === null)) throw invalid('tls_cert_path and tls_key_path: give both for a client certificate, or neither');
  const tls = usesTls(s.broker, s.tls_enabled);
  for (const field of TLS_FILES) {
    const path = s[field];
    if (path === null) continue;
    if (!tls) throw invalid(`${field}: TLS is off for this broker; set tls_enabled or use an ssl:// broker URL`);
    try {
      accessSync(path, constants.R_OK);
    } catch (err) {
      throw invalid(`${field}: cannot read '${path}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
}

/** The TLS files' contents for the client; throws "cannot read <field> ..." when one went missing since it was checked. */
export function readTlsFiles(s: SubscriptionSettings): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const read = (field: (typeof TLS_FILES)[number]) => {
    const path = s[field];
    if (path === null) return undefined;
    try {
      return readFileSync(path);
    } catch (err) {
      throw invalid(`cannot read ${field} '${path}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  const out: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
  const ca = read('tls_ca_path');
  const cert = read('tls_cert_path');
  const key = read('tls_key_path');
  if (ca) out.ca = ca;
  if (cert) out.cert = cert;
  if (key) out.key = key;
  return out;
}

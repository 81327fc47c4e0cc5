/** The JSON shapes of subscriptions. The password never appears: only whether one is set. */
import type { ConnectionState } from './subscription-runtime.ts';
import type { SubscriptionRecord, SubscriptionStatus } from './subscription.ts';

/** Live state of a subscription, from the service. */
export interface LiveState {
  status: SubscriptionStatus;
  connection: ConnectionState;
  lastError: string | null;
}

/** List entry: `{id, name, broker, status}`. */
export function summaryView(r: SubscriptionRecord, live: LiveState) {
  return { id: r.id, name: r.name, broker: r.broker, status: live.status, connected: live.connection === 'connected' };
}

/**
 * Details (GET, and the create/update responses, a superset of the spec's create body). `status` is
 * the state machine's `running`/`stopped`; `connection` says whether a running one is `connecting`,
 * `connected` or `reconnecting` while its broker is away.
 */
export function detailsView(r: SubscriptionRecord, live: LiveState) {
  return {
    id: r.id,
    name: r.name,
    broker: r.broker,
    topics: r.topics,
    database: r.database,
    qos: r.qos,
    client_id: r.client_id,
    username: r.username,
    has_password: r.password_enc !== null,
    tls_enabled: r.tls_enabled,
    tls_cert_path: r.tls_cert_path,
    tls_key_path: r.tls_key_path,
    tls_ca_path: r.tls_ca_path,
    topic_mapping: r.topic_mapping,
    keep_alive_seconds: r.keep_alive_seconds,
    connect_timeout_seconds: r.connect_timeout_seconds,
    reconnect_min_seconds: r.reconnect_min_seconds,
    reconnect_max_seconds: r.reconnect_max_seconds,
    auto_start: r.auto_start,
    status: live.status,
    connection: live.connection,
    connected: live.connection === 'connected',
    last_error: live.lastError,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** The details view's type. */
export type SubscriptionDetails = ReturnType<typeof detailsView>;

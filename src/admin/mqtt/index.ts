/** MQTT subscriptions: the public face of admin/mqtt (the only folder that imports the `mqtt` package). */
export { createMqttService, secretKeyPath } from './create-mqtt-service.ts';
export { MqttService, type MqttServiceDeps, type TransitionResult } from './mqtt-service.ts';
export { SubscriptionStore } from './subscription-store.ts';
export { SecretBox, loadSecretKey } from './secret-box.ts';
export { createSubscriptionBody, updateSubscriptionBody, type CreateSubscriptionInput, type UpdateSubscriptionInput } from './subscription-schema.ts';
export { decodeMessage } from './message-decoder.ts';
export type { PointWriter, SubscriptionRecord, SubscriptionStatus } from './subscription.ts';
export type { SubscriptionDetails } from './subscription-views.ts';
export type { SubscriptionStatsView } from './subscription-stats.ts';

export { DatabaseService, type BufferedView, type DatabaseSummary } from './databases/database-service.ts';
export {
  createMqttService,
  createSubscriptionBody,
  updateSubscriptionBody,
  MqttService,
  type PointWriter,
  type SubscriptionDetails,
} from './mqtt/index.ts';

/** Builds the MQTT service from the config: secret key (config or key file), store, service. */
import { dirname, join } from 'node:path';
import type { CatalogDb } from '../../catalog/index.ts';
import type { Config } from '../../config/index.ts';
import type { Logger } from '../../observability/index.ts';
import { MqttService } from './mqtt-service.ts';
import { loadSecretKey, SecretBox } from './secret-box.ts';
import { SubscriptionStore } from './subscription-store.ts';
import type { PointWriter } from './subscription.ts';

/** The key file's path: next to the metadata database, or null when that lives in memory. */
export function secretKeyPath(dbPath: string): string | null {
  return dbPath === ':memory:' ? null : join(dirname(dbPath), 'secret.key');
}

/** The MQTT service over the catalog, writing through `write`; throws "cannot start: ..." on a bad key. */
export function createMqttService(opts: { catalog: CatalogDb; config: Config; write: PointWriter; logger: Logger }): MqttService {
  const keyFile = secretKeyPath(opts.config.auth.db_path);
  const configKey = opts.config.mqtt.encryption_key;
  // A configured key is checked now (a typo stops startup); the key file is made only when a password needs it.
  const secrets = new SecretBox(
    configKey.trim() !== ''
      ? loadSecretKey(configKey, keyFile).key
      : () => {
          const { key, source } = loadSecretKey('', keyFile);
          if (source === 'key-file-created') opts.logger.info('created secret key file for MQTT passwords', { path: keyFile });
          return key;
        },
  );
  return new MqttService({
    store: new SubscriptionStore(opts.catalog),
    secrets,
    write: opts.write,
    logger: opts.logger,
    enabled: opts.config.mqtt.enabled,
  });
}

import { expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderEffectiveConfig } from './effective.ts';
import { loadConfig } from './load.ts';

test('the effective configuration loads back to the same settings, secrets left out and named', () => {
  const env = {
    SVC_STORAGE_BACKEND: 's3',
    SVC_STORAGE_S3_BUCKET: 'b',
    SVC_STORAGE_S3_SECRET_KEY: 'very-secret-value',
    SVC_INGEST_MAX_BUFFER_SIZE: '1234',
    SVC_SERVER_SHUTDOWN_TIMEOUT: '7s',
    SVC_STORAGE_CACHE_SIZE: '3GB',
    SVC_MQTT_ENCRYPTION_KEY: 'a2V5LWtleS1rZXkta2V5LWtleS1rZXkta2V5LWtleS0=',
  };
  const { config } = loadConfig({ env, cwd: tmpdir(), explicitPath: undefined });
  const out = renderEffectiveConfig(config, 'environment variables and defaults');
  expect(out.text).not.toContain('very-secret-value');
  expect(out.text).not.toContain('a2V5LWtleS1r');
  expect(out.secretsOmitted.sort()).toEqual(['mqtt.encryption_key', 'storage.s3_secret_key']);
  expect(out.text).toContain('# storage.s3_secret_key, mqtt.encryption_key');

  const dir = mkdtempSync(join(tmpdir(), 'svc-effective-'));
  try {
    writeFileSync(join(dir, 'svc.toml'), out.text);
    const again = loadConfig({ explicitPath: join(dir, 'svc.toml'), env: {} }).config;
    expect(again.storage.s3_secret_key).toBe('');
    expect(again.mqtt.encryption_key).toBe('');
    expect({ ...again, storage: { ...again.storage, s3_secret_key: 'x' }, mqtt: { ...again.mqtt, encryption_key: 'x' } }).toEqual({
      ...config,
      storage: { ...config.storage, s3_secret_key: 'x' },
      mqtt: { ...config.mqtt, encryption_key: 'x' },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * A backup carries the configuration even when the server runs from environment variables alone:
 * config/svc.effective.toml (secrets left out and named), restored with restore_config as the TOML
 * file, the one it replaces kept as .before-restore.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from './helpers/parquet.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

let s: TestServer;
const SECRET = 'do-not-copy-this-secret';
beforeAll(async () => {
  s = await startServer({ env: { SVC_MQTT_ENABLED: 'false', SVC_INGEST_MAX_BUFFER_SIZE: '4321', SVC_STORAGE_S3_SECRET_KEY: SECRET } });
});
afterAll(() => s?.cleanup());

const backupOnce = async (): Promise<string> => {
  expect((await json(s, 'POST', '/api/v1/backup')).status).toBe(202);
  let st: { status: string; backup_id: string } | null = null;
  await waitFor(async () => (st = (await json(s, 'GET', '/api/v1/backup/status')).body).status !== 'running', 30_000, 'backup');
  expect(st!.status).toBe('completed');
  return st!.backup_id;
};
const restore = async (id: string) => {
  expect((await json(s, 'POST', '/api/v1/backup/restore', { backup_id: id, restore_data: false, restore_metadata: false, restore_config: true, confirm: true })).status).toBe(202);
  await waitFor(async () => (await json(s, 'GET', '/api/v1/backup/status')).body.status !== 'running', 30_000, 'restore');
};

test('env-only server: the backup holds the effective config without secrets; restore writes it as svc.toml, keeping the old one', async () => {
  const id = await backupOnce();
  const dir = join(s.dir, 'data', 'backups', id);
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  expect(manifest.config).toBeNull();
  expect(manifest.effective_config).toMatchObject({ file: 'config/svc.effective.toml', secrets_omitted: ['storage.s3_secret_key'] });
  const text = readFileSync(join(dir, 'config', 'svc.effective.toml'), 'utf8');
  expect(text).toContain('max_buffer_size = 4321');
  expect(text).toContain('# storage.s3_secret_key');
  expect(text).not.toContain(SECRET);

  const toml = join(s.dir, 'svc.toml');
  writeFileSync(toml, '# hand-written\n');
  await restore(id);
  expect(readFileSync(toml, 'utf8')).toBe(text);
  expect(readFileSync(toml + '.before-restore', 'utf8')).toBe('# hand-written\n');
}, 60_000);

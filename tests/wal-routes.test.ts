/** /api/wal/*: status, files, health and cleanup, with the WAL on and off. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { waitFor } from './helpers/until.ts';

const lp = (s: TestServer, body: string) =>
  s.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'waldb' }, body });

describe('WAL routes, enabled', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ env: { SVC_WAL_ENABLED: 'true', SVC_WAL_SYNC_MODE: 'fsync', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' } });
  });
  afterAll(() => s.cleanup());

  test('status counts appends and shows the configuration', async () => {
    expect((await lp(s, 'm,h=a v=1 1\nm,h=b v=2 2')).status).toBe(204);
    const { status, body } = await json(s, 'GET', '/api/wal/status');
    expect(status).toBe(200);
    expect(body.enabled).toBe(true);
    expect(body.configuration).toMatchObject({ sync_mode: 'fsync', max_size_mb: 100, max_age_seconds: 3600 });
    expect(body.configuration.current_file).toMatch(/\.wal$/);
    expect(body.stats).toMatchObject({ total_entries: 1, total_records: 2, pending_entries: 1, failed_writes: 0 });
    expect(body.recovery).toMatchObject({ files: 0, records: 0, dropped: 0 });
  });

  test('files lists the active segment; a flush releases it', async () => {
    let { body } = await json(s, 'GET', '/api/wal/files');
    expect(body.active).toHaveLength(1);
    expect(body.active[0]).toMatchObject({ state: 'active', pending_entries: 1 });
    expect((await json(s, 'POST', '/api/v1/write/line-protocol/flush')).status).toBe(200);
    // The flush answers once its files are registered; their WAL entries are released in that same step.
    ({ body } = await json(s, 'GET', '/api/wal/files'));
    expect(body.active[0]?.pending_entries ?? 0).toBe(0);
  });

  test('health is healthy and syncs run', async () => {
    await waitFor('a WAL sync', async () => (await json(s, 'GET', '/api/wal/status')).body.stats.total_syncs >= 1);
    const { status, body } = await json(s, 'GET', '/api/wal/health');
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 'healthy', healthy: true, enabled: true, sync_mode: 'fsync', last_error: null });
    expect((await json(s, 'GET', '/api/wal/status')).body.stats.total_syncs).toBeGreaterThanOrEqual(1);
  });

  test('cleanup is admin-only, validates max_age_hours and removes old .recovered files', async () => {
    const { body: created } = await json(s, 'POST', '/api/v1/auth/tokens', { name: 'wal-reader' });
    expect((await json(s, 'POST', '/api/wal/cleanup', undefined, created.token)).status).toBe(403);
    expect((await json(s, 'GET', '/api/wal/status', undefined, created.token)).status).toBe(200);
    expect((await json(s, 'POST', '/api/wal/cleanup?max_age_hours=-1')).status).toBe(400);
    expect((await json(s, 'POST', '/api/wal/cleanup?max_age_hours=abc')).status).toBe(400);
    const old = join(s.dir, 'data', 'wal', '0000000000000000.wal.recovered');
    writeFileSync(old, 'replayed long ago');
    const longAgo = Date.now() / 1000 - 3 * 86_400;
    utimesSync(old, longAgo, longAgo);
    const res = await json(s, 'POST', '/api/wal/cleanup');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ max_age_hours: 24, removed: 1, freed_bytes: 17 });
  });
});

describe('WAL routes, disabled', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s.cleanup());

  test('every route answers, saying the WAL is off', async () => {
    expect((await lp(s, 'm v=1 1')).status).toBe(204);
    const status = await json(s, 'GET', '/api/wal/status');
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ enabled: false, stats: null, recovery: null });
    expect((await json(s, 'GET', '/api/wal/files')).body).toMatchObject({ active: [], recovered: [], total_size_mb: 0 });
    expect((await json(s, 'GET', '/api/wal/health')).body).toMatchObject({ status: 'disabled', healthy: true, enabled: false });
    expect((await json(s, 'POST', '/api/wal/cleanup?max_age_hours=0')).body).toMatchObject({ removed: 0 });
  });
});

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { dataFiles, waitFor } from './helpers/parquet.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

const RULE = 'must start with a letter and contain only alphanumeric characters, underscores, or hyphens';

async function writeLines(s: TestServer, db: string, body: string) {
  const res = await s.fetch(`/api/v1/write/line-protocol`, { method: 'POST', headers: { 'x-svc-database': db }, body });
  expect(res.status).toBe(204);
}

describe('databases (delete disabled)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => {
    await s.cleanup();
  });

  test('create answers 201 with name, measurement_count, created_at', async () => {
    const res = await json(s, 'POST', '/api/v1/databases', { name: 'metrics_1' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'metrics_1', measurement_count: 0 });
    expect(Date.parse(res.body.created_at)).toBeGreaterThan(0);
    expect((await json(s, 'POST', '/api/v1/databases', { name: 'metrics_1' })).status).toBe(409);
  });

  test('bad and reserved names are 400 with the spec message', async () => {
    for (const name of ['1abc', 'has space', 'a.b', '../x', 'x'.repeat(65), '', 'system', 'internal', '_internal']) {
      const res = await json(s, 'POST', '/api/v1/databases', { name });
      expect({ name, status: res.status }).toEqual({ name, status: 400 });
    }
    expect((await json(s, 'POST', '/api/v1/databases', { name: 'bad name' })).body.error).toContain(RULE);
    expect((await json(s, 'POST', '/api/v1/databases', {})).status).toBe(400);
    expect((await json(s, 'POST', '/api/v1/databases', { name: 'x'.repeat(64).replace(/^x/, 'a') })).status).toBe(201);
  });

  test('a write creates its database implicitly; measurements are listed', async () => {
    await writeLines(s, 'implicit', 'cpu,host=a v=1 1700000000000000000\nmem,host=a v=2 1700000000000000000');
    const got = await json(s, 'GET', '/api/v1/databases/implicit');
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ name: 'implicit', measurement_count: 2 });
    const ms = await json(s, 'GET', '/api/v1/databases/implicit/measurements');
    expect(ms.body).toEqual({ database: 'implicit', measurements: [{ name: 'cpu' }, { name: 'mem' }], count: 2 });
    const list = await json(s, 'GET', '/api/v1/databases');
    expect(list.body.count).toBe(list.body.databases.length);
    expect(list.body.databases).toContainEqual({ name: 'implicit', measurement_count: 2 });
    expect(list.body.databases).toContainEqual({ name: 'metrics_1', measurement_count: 0 });
  });

  test('unknown database is 404', async () => {
    expect((await json(s, 'GET', '/api/v1/databases/nope')).status).toBe(404);
    expect((await json(s, 'GET', '/api/v1/databases/nope/measurements')).status).toBe(404);
  });

  test('delete is 403 while delete.enabled is false', async () => {
    const res = await json(s, 'DELETE', '/api/v1/databases/implicit?confirm=true');
    expect(res.status).toBe(403);
    expect(res.body.error).toContain('set delete.enabled=true');
  });
});

describe('databases (delete enabled)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ env: { SVC_DELETE_ENABLED: 'true' }, keepDir: true });
  });
  afterAll(async () => {
    await s.cleanup();
  });

  test('delete needs ?confirm=true, then removes files, measurements and the database', async () => {
    await writeLines(s, 'doomed', 'cpu,host=a v=1 1700000000000000000\ncpu,host=a v=2 1700003600000000000');
    expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBeLessThan(300);
    await writeLines(s, 'doomed', 'cpu,host=b v=3 1700000000000000000');
    const noConfirm = await json(s, 'DELETE', '/api/v1/databases/doomed');
    expect(noConfirm.status).toBe(400);
    expect(noConfirm.body.error).toContain('add ?confirm=true');
    const res = await json(s, 'DELETE', '/api/v1/databases/doomed?confirm=true');
    expect(res.status).toBe(200);
    expect(res.body.files_deleted).toBe(2);
    expect(typeof res.body.message).toBe('string');
    expect((await json(s, 'GET', '/api/v1/databases/doomed')).status).toBe(404);
    // Every data file is gone (the local store leaves empty hour folders behind; objects are what count).
    await waitFor(() => dataFiles(s.dir).every((f) => !f.startsWith('doomed/')), 5000, 'dropped files to be deleted');
    // Buffered rows went with it: nothing reappears after a flush.
    await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
    expect((await json(s, 'GET', '/api/v1/databases/doomed')).status).toBe(404);
    expect((await json(s, 'DELETE', '/api/v1/databases/doomed?confirm=true')).status).toBe(404);
  });

  test('an ordinary token cannot drop a database', async () => {
    const t = await json(s, 'POST', '/api/v1/auth/tokens', { name: 'writer' });
    await writeLines(s, 'kept', 'cpu v=1');
    expect((await json(s, 'DELETE', '/api/v1/databases/kept?confirm=true', undefined, t.body.token)).status).toBe(403);
    expect((await json(s, 'POST', '/api/v1/databases', { name: 'bywriter' }, t.body.token)).status).toBe(201);
  });
});

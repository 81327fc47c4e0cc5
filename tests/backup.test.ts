/**
 * Backup and restore end to end: a backup taken while writes continue holds everything acknowledged
 * before it started; a second operation meanwhile is 409; restoring into a fresh server (the backup
 * folder copied into its backup.local_path) gives the same query results and brings back tokens and
 * MQTT subscriptions, keeping the old metadata database as .before-restore.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN, json, startServer, type TestServer } from './helpers/server.ts';
import { flush, points, queryFiles, rows, waitFor, writeLines } from './compaction-helpers.ts';

let a: TestServer;
let b: TestServer;
const ENV = { SVC_INGEST_MAX_BUFFER_AGE_MS: '200', SVC_MQTT_ENABLED: 'false' };
beforeAll(async () => {
  [a, b] = await Promise.all([startServer({ env: ENV }), startServer({ env: ENV })]);
});
afterAll(async () => {
  await Promise.all([a?.cleanup(), b?.cleanup()]);
});

const waitDone = async (s: TestServer) => {
  let st: any = null;
  await waitFor(async () => (st = (await json(s, 'GET', '/api/v1/backup/status')).body).status !== 'running', 60_000, 'backup operation');
  return st;
};
const SQL_CPU = 'SELECT host, time, v, n FROM bk.cpu ORDER BY time, host';

describe('backup and restore', () => {
  let backupId = '';
  let opsToken = '';
  let ackedLive = 0;

  test('a backup while writes continue holds every row acknowledged before it; a second operation is 409', async () => {
    for (let k = 0; k < 3; k++) {
      await writeLines(a, 'bk', points('cpu', 500, { offsetMs: k * 600_000 }));
      await flush(a);
    }
    await writeLines(a, 'bk', points('mem', 100)); // left in the buffer: the backup flushes it
    opsToken = (await json(a, 'POST', '/api/v1/auth/tokens', { name: 'ops', permissions: ['read'] })).body.token;
    const policy = await json(a, 'POST', '/api/v1/retention', { name: 'keep-bk', database: 'bk', retention_days: 3650, enabled: false });
    expect(policy.status).toBe(201);
    expect((await json(a, 'POST', '/api/v1/mqtt/subscriptions', { name: 'plant', broker: 'tcp://127.0.0.1:1', topics: ['t/#'], database: 'bk', auto_start: false })).status).toBe(201);

    let writing = true;
    let i = 0;
    const writer = (async () => {
      while (writing) {
        await writeLines(a, 'bk', [`live,host=w v=${i} ${1_700_000_000_000 + i}`]);
        i++;
        await Bun.sleep(5);
      }
    })();
    await Bun.sleep(100);
    ackedLive = i;
    const started = await json(a, 'POST', '/api/v1/backup');
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'running' });
    expect(started.body.message).toBeString();
    const second = await json(a, 'POST', '/api/v1/backup');
    const restore = await json(a, 'POST', '/api/v1/backup/restore', { backup_id: started.body.backup_id, confirm: true });
    const st = await waitDone(a);
    writing = false;
    await writer;
    expect(second.status).toBe(409);
    expect(second.body.error).toMatch(/already running/);
    expect(restore.status).toBe(409);

    backupId = started.body.backup_id;
    expect(backupId).toMatch(/^backup-\d{8}-\d{6}-[a-z0-9]+$/);
    expect(st).toMatchObject({ operation: 'backup', backup_id: backupId, status: 'completed' });
    expect(st.processed_files).toBe(st.total_files);
    expect(st.processed_bytes).toBe(st.total_bytes);
    const dir = join(a.dir, 'data', 'backups', backupId);
    for (const part of ['manifest.json', 'data', 'metadata/svc.db']) expect(existsSync(join(dir, part))).toBe(true);
    const count = async (m: string) => Number((await queryFiles(dir, `SELECT count(*) AS c FROM read_parquet('${dir}/data/bk/${m}/**/*.parquet')`, '.'))[0]!.c);
    expect(await count('cpu')).toBe(1500);
    expect(await count('mem')).toBe(100);
    expect(await count('live')).toBeGreaterThanOrEqual(ackedLive);
  });

  test('list, manifest, auth', async () => {
    const list = await json(a, 'GET', '/api/v1/backup');
    expect(list.status).toBe(200);
    expect(list.body.backups.map((x: any) => x.backup_id)).toContain(backupId);
    const m = await json(a, 'GET', `/api/v1/backup/${backupId}`);
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({ backup_id: backupId, format: 1 });
    expect(m.body.created_at).toBeString();
    const bk = m.body.databases.find((d: any) => d.name === 'bk');
    expect(bk.measurements.find((x: any) => x.name === 'cpu')).toMatchObject({ rows: 1500 });
    expect(m.body.total_files).toBe(m.body.files.length);
    expect((await json(a, 'GET', '/api/v1/backup/backup-20990101-000000-none')).status).toBe(404);
    expect((await json(a, 'GET', '/api/v1/backup/../etc')).status).toBeOneOf([400, 404]);
    expect((await json(a, 'GET', '/api/v1/backup', undefined, opsToken)).status).toBe(403);
    expect((await json(a, 'POST', '/api/v1/backup', undefined, opsToken)).status).toBe(403);
  });

  test('restore into a fresh server: same query results, tokens and subscriptions back, old metadata kept', async () => {
    // The fresh server has data and a token of its own, which the restore replaces.
    await writeLines(b, 'other', points('x', 10));
    await flush(b);
    const bToken = (await json(b, 'POST', '/api/v1/auth/tokens', { name: 'b-only' })).body.token;
    expect((await json(b, 'GET', '/api/v1/auth/verify', undefined, opsToken)).body.valid).not.toBe(true);

    cpSync(join(a.dir, 'data', 'backups', backupId), join(b.dir, 'data', 'backups', backupId), { recursive: true });
    expect((await json(b, 'POST', '/api/v1/backup/restore', { backup_id: backupId })).status).toBe(400);
    expect((await json(b, 'POST', '/api/v1/backup/restore', { backup_id: 'backup-20990101-000000-none', confirm: true })).status).toBe(404);
    const r = await json(b, 'POST', '/api/v1/backup/restore', { backup_id: backupId, confirm: true });
    expect(r.status).toBe(202);
    const st = await waitDone(b);
    expect(st).toMatchObject({ operation: 'restore', backup_id: backupId, status: 'completed' });

    expect(await rows(b, 'bk', SQL_CPU)).toEqual(await rows(a, 'bk', SQL_CPU));
    expect(await rows(b, 'bk', 'SELECT count(*)::INT AS c FROM bk.mem')).toEqual([{ c: 100 }]);
    expect(await rows(b, 'other', 'SELECT count(*)::INT AS c FROM other.x')).toEqual([{ c: 0 }]);
    const verify = await json(b, 'GET', '/api/v1/auth/verify', undefined, opsToken);
    expect(verify.body.valid).toBe(true);
    expect((await json(b, 'GET', '/api/v1/compaction/status', undefined, bToken)).status).toBe(401);
    const policies = await json(b, 'GET', '/api/v1/retention');
    expect(JSON.stringify(policies.body)).toContain('keep-bk');
    const subs = await json(b, 'GET', '/api/v1/mqtt/subscriptions');
    expect(subs.body.subscriptions.map((x: any) => x.name)).toContain('plant');
    expect(existsSync(join(b.dir, 'data', 'svc.db.before-restore'))).toBe(true);
    // The restored server keeps answering and accepting writes.
    await writeLines(b, 'bk', points('cpu', 1, { offsetMs: 5_000_000 }));
    expect(await rows(b, 'bk', 'SELECT count(*)::INT AS c FROM bk.cpu')).toEqual([{ c: 1501 }]);
  });

  test('CLI: svc backup create and list against a running server, with a progress bar on stderr', async () => {
    const cli = (...args: string[]) => {
      const p = Bun.spawnSync([process.execPath, join(import.meta.dir, '..', 'src', 'main.ts'), 'backup', ...args, '--url', a.url], { env: { ...process.env, SVC_TOKEN: ADMIN_TOKEN } });
      return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
    };
    const created = cli('create');
    expect(created.code).toBe(0);
    const id = created.out.trim();
    expect(id).toMatch(/^backup-\d{8}-\d{6}-[a-z0-9]+$/);
    expect(created.err).toMatch(/backup \[#+\] 100%/);
    expect(cli('list').out).toContain(id);
    expect(cli('restore', id).code).toBe(2); // --yes is required
    const denied = Bun.spawnSync([process.execPath, join(import.meta.dir, '..', 'src', 'main.ts'), 'backup', 'list', '--url', a.url, '--token', opsToken]);
    expect(denied.exitCode).toBe(1);
    expect(denied.stderr.toString()).toMatch(/403/);
  }, 60_000);

  test('delete', async () => {
    expect((await json(b, 'DELETE', `/api/v1/backup/${backupId}`)).status).toBe(200);
    expect((await json(b, 'GET', `/api/v1/backup/${backupId}`)).status).toBe(404);
    expect((await json(b, 'DELETE', `/api/v1/backup/${backupId}`)).status).toBe(404);
  });
});

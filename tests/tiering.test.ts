/**
 * Tiered storage end to end: hot local disk, cold s3rver and cold Azurite. Policies (bad values,
 * unknown database), a dry run that moves nothing, a migration, queries equal before and after (a
 * pruning corpus over both tiers), files/stats/status, a restart, delete on cold partitions, a cold
 * backend going away (clear errors, nothing lost) and a kill -9 at each step of a move.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAzurite } from './helpers/azurite.ts';
import { waitFor } from './helpers/parquet.ts';
import { startS3rver } from './helpers/s3rver.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

const [s3, azurite] = await Promise.all([startS3rver(['cold']), startAzurite()]);
await azurite.createContainer('cold');
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all([s3.close(), azurite.close()]);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** SVC_STORAGE_* of a peer, as the cold tier's SVC_TIERING_COLD_*. */
const coldEnv = (storage: Record<string, string>) => Object.fromEntries(Object.entries(storage).map(([k, v]) => [k.replace('SVC_STORAGE_', 'SVC_TIERING_COLD_'), v]));
const COLD = {
  s3: (prefix: string) => coldEnv(s3.env('cold', prefix)),
  azure: (prefix: string) => coldEnv(azurite.env('cold', prefix)),
};

const BASE = {
  SVC_TIERING_ENABLED: 'true',
  SVC_INGEST_MAX_BUFFER_AGE_MS: '600000',
  SVC_COMPACTION_ENABLED: 'false',
  SVC_COMPACTION_HOURLY_MIN_FILES: '2',
  SVC_DELETE_ENABLED: 'true',
};

const H_NS = 3_600_000_000_000n;
const T0_NS = BigInt(Date.UTC(2024, 0, 1)) * 1_000_000n;

/** db1.cpu: 6 old hours of 10 rows; db2.mem: 3 old hours; db1.cpu also one row now (stays hot). */
function corpusLines(): { db: string; body: string }[] {
  const cpu: string[] = [];
  for (let h = 0; h < 6; h++)
    for (let i = 0; i < 10; i++) cpu.push(`cpu,host=host_${i % 3} usage=${h * 10 + i * 1.5} ${T0_NS + BigInt(h) * H_NS + BigInt(i) * 360_000_000_000n}`);
  cpu.push(`cpu,host=host_now usage=1 ${BigInt(Date.now()) * 1_000_000n}`);
  const mem: string[] = [];
  for (let h = 0; h < 3; h++) for (let i = 0; i < 10; i++) mem.push(`mem,host=host_${i % 2} usage=${i} ${T0_NS + BigInt(h) * H_NS + BigInt(i) * 360_000_000_000n}`);
  return [
    { db: 'db1', body: cpu.join('\n') },
    { db: 'db2', body: mem.join('\n') },
  ];
}

/** Queries whose results must not change when files move between tiers (time pruning on both). */
const CORPUS = [
  'SELECT count(*) AS n FROM db1.cpu',
  `SELECT count(*) AS n FROM db1.cpu WHERE time >= '2024-01-01 02:00:00' AND time < '2024-01-01 04:00:00'`,
  `SELECT count(*) AS n FROM db1.cpu WHERE time BETWEEN '2024-01-01 01:00:00' AND '2024-01-01 01:59:00'`,
  `SELECT count(*) AS n FROM db1.cpu WHERE time = '2024-01-01 03:00:00'`,
  `SELECT count(*) AS n FROM db1.cpu WHERE time >= now() - INTERVAL 1 HOUR`,
  `SELECT host, round(avg(usage), 6) AS a, count(*) AS n FROM db1.cpu WHERE time >= '2024-01-01 03:30:00' GROUP BY host ORDER BY host`,
  `SELECT time_bucket(INTERVAL 1 HOUR, time) AS b, count(*) AS n FROM db1.cpu GROUP BY b ORDER BY b`,
  `SELECT * FROM db1.cpu WHERE time < '2024-01-02' ORDER BY time DESC LIMIT 5`,
  `SELECT c.time, c.usage, m.usage AS mem FROM db1.cpu c JOIN db2.mem m ON c.time = m.time WHERE c.time >= '2024-01-01 01:00:00' ORDER BY c.time LIMIT 10`,
  `SELECT count(*) AS n FROM (SELECT * FROM db1.cpu WHERE time < '2024-01-01 01:00:00') x WHERE x.time > '2024-01-01 00:30:00'`,
];

async function write(s: TestServer): Promise<void> {
  for (const { db, body } of corpusLines()) {
    const res = await s.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': db }, body });
    expect(res.status).toBe(204);
  }
  expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
}

async function answers(s: TestServer): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const sql of CORPUS) {
    const r = await json(s, 'POST', '/api/v1/query', { sql });
    expect(r.status, `${sql}: ${JSON.stringify(r.body)}`).toBe(200);
    out.push(sql.includes('now()') ? r.body.data : { columns: r.body.columns, data: r.body.data });
  }
  return out;
}

async function migrate(s: TestServer, body: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const r = await json(s, 'POST', '/api/v1/tiering/migrate', { dry_run: false, ...body });
  expect(r.status).toBe(202);
  let job: Record<string, any> = {};
  await waitFor(async () => (job = (await json(s, 'GET', `/api/v1/tiering/jobs/${r.body.job_id}`)).body).status !== 'running', 60_000, 'tiering job');
  return job;
}

/** Registered files of the server's metadata database with their tier. */
function manifest(dir: string): { path: string; tier: string; database: string }[] {
  const db = new Database(join(dir, 'data', 'svc.db'), { readonly: true });
  try {
    return db.query<{ path: string; tier: string; database: string }, []>('SELECT path, tier, database FROM files ORDER BY path').all();
  } finally {
    db.close();
  }
}

const hotFile = (dir: string, path: string) => existsSync(join(dir, 'data', 'svc', path));

for (const backend of ['s3', 'azure'] as const) {
  describe(`tiering: hot local, cold ${backend}`, () => {
    test('policies, dry run, migration, equal queries, files, stats, restart, delete on cold', async () => {
      const prefix = `t${Date.now().toString(36)}`;
      const env = { ...BASE, ...COLD[backend](prefix) };
      const s = await startServer({ env, keepDir: true });
      dirs.push(s.dir);
      let again: TestServer | null = null;
      try {
        await write(s);
        const status = await json(s, 'GET', '/api/v1/tiering/status');
        expect(status.body).toMatchObject({ enabled: true, hot_backend: 'local', cold_backend: backend, running: false, last_run: null });
        expect(typeof status.body.next_run).toBe('string');
        expect((await json(s, 'GET', '/health')).body.storage.cold).toMatchObject({ backend, state: 'healthy' });

        // Policies: bad values 400, unknown database 404, a target once (409), CRUD.
        expect((await json(s, 'POST', '/api/v1/tiering/policies', { database: 'db1', hot_max_age_days: 0 })).status).toBe(400);
        expect((await json(s, 'POST', '/api/v1/tiering/policies', { database: 'db1', hot_max_age_days: 'x' })).status).toBe(400);
        expect((await json(s, 'POST', '/api/v1/tiering/policies', { database: 'db1', hot_max_age_days: 3, extra: 1 })).status).toBe(400);
        expect((await json(s, 'POST', '/api/v1/tiering/policies', { database: 'nope', hot_max_age_days: 3 })).status).toBe(404);
        const dbPolicy = await json(s, 'POST', '/api/v1/tiering/policies', { database: 'db1', hot_max_age_days: 40 });
        expect(dbPolicy.status).toBe(201);
        expect((await json(s, 'POST', '/api/v1/tiering/policies', { database: 'db1', hot_max_age_days: 5 })).status).toBe(409);
        const memPolicy = await json(s, 'POST', '/api/v1/tiering/policies', { database: 'db2', measurement: 'mem', hot_max_age_days: 1_000_000 });
        expect(memPolicy.status).toBe(201);
        expect((await json(s, 'PUT', `/api/v1/tiering/policies/${dbPolicy.body.id}`, { database: 'db1', hot_max_age_days: 30 })).body).toMatchObject({ hot_max_age_days: 30, measurement: null });
        expect((await json(s, 'GET', `/api/v1/tiering/policies/${dbPolicy.body.id}`)).body.hot_max_age_days).toBe(30);
        expect((await json(s, 'GET', '/api/v1/tiering/policies')).body.count).toBe(2);
        expect((await json(s, 'GET', '/api/v1/tiering/policies/unknown')).status).toBe(404);
        const temp = await json(s, 'POST', '/api/v1/tiering/policies', { database: 'db2', hot_max_age_days: 7 });
        expect((await json(s, 'DELETE', `/api/v1/tiering/policies/${temp.body.id}`)).status).toBe(200);
        expect((await json(s, 'DELETE', `/api/v1/tiering/policies/${temp.body.id}`)).status).toBe(404);
        // Changes need admin.
        expect((await json(s, 'POST', '/api/v1/tiering/policies', { database: 'db1', hot_max_age_days: 3 }, null)).status).toBe(401);

        const before = await answers(s);
        const files = manifest(s.dir);
        expect(files).toHaveLength(6 + 1 + 3);

        // The dry run: db1.cpu's six old hours (not the recent one, not db2.mem under its long policy); nothing moves.
        const plan = await json(s, 'POST', '/api/v1/tiering/migrate', { dry_run: true });
        expect(plan.status).toBe(200);
        expect(plan.body.total_files).toBe(6);
        expect(plan.body.files.every((f: { path: string; hour: string; bytes: number }) => f.path.startsWith('db1/cpu/2024/') && f.hour.startsWith('2024-01-01T') && f.bytes > 0)).toBe(true);
        expect(plan.body.total_bytes).toBe(plan.body.files.reduce((n: number, f: { bytes: number }) => n + f.bytes, 0));
        expect(manifest(s.dir).every((f) => f.tier === 'hot')).toBe(true);
        expect((await json(s, 'GET', '/api/v1/tiering/stats')).body.cold).toEqual({ files: 0, bytes: 0 });
        expect((await json(s, 'POST', '/api/v1/tiering/migrate', { database: 'nope', dry_run: true })).status).toBe(404);

        const job = await migrate(s);
        expect(job).toMatchObject({ status: 'completed', files_moved: 6, failures: 0 });
        expect(job.bytes_moved).toBe(plan.body.total_bytes);
        const moved = manifest(s.dir).filter((f) => f.tier === 'cold');
        expect(moved.map((f) => f.path).sort()).toEqual(plan.body.files.map((f: { path: string }) => f.path).sort());
        // The hot copies are gone; every other file stays hot.
        for (const f of moved) expect(hotFile(s.dir, f.path)).toBe(false);
        expect(await answers(s)).toEqual(before);

        const listed = await json(s, 'GET', '/api/v1/tiering/files?tier=cold&database=db1');
        expect(listed.body.count).toBe(6);
        expect(listed.body.files[0]).toMatchObject({ tier: 'cold', database: 'db1', measurement: 'cpu' });
        expect(typeof listed.body.files[0].moved_at).toBe('string');
        expect((await json(s, 'GET', '/api/v1/tiering/files?tier=lukewarm')).status).toBe(400);
        const stats = (await json(s, 'GET', '/api/v1/tiering/stats')).body;
        expect(stats.cold).toEqual({ files: 6, bytes: plan.body.total_bytes });
        expect(stats.hot.files).toBe(4);
        expect(stats.by_database.db1.cold.files).toBe(6);
        expect((await json(s, 'GET', '/api/v1/tiering/status')).body.last_result).toMatchObject({ status: 'completed', files_moved: 6 });
        expect(await (await s.fetch('/metrics')).text()).toMatch(/svc_tiering_files_moved_total 6\b/);
        // Nothing left to move.
        expect((await json(s, 'POST', '/api/v1/tiering/migrate', { dry_run: true })).body.total_files).toBe(0);

        // A restart reads the same tiers.
        expect(await s.stop()).toBe(0);
        again = await startServer({ dir: s.dir, env });
        expect(await answers(again)).toEqual(before);

        // Delete rewrites a cold file: its replacement stays cold, the rows are gone.
        const del = await json(again, 'POST', '/api/v1/delete', { database: 'db1', measurement: 'cpu', where: "host = 'host_0' AND time < '2024-01-01 01:00:00'", confirm: true });
        expect(del.status).toBe(200);
        const hour0 = manifest(again.dir).filter((f) => f.path.startsWith('db1/cpu/2024/01/01/00/'));
        expect(hour0.map((f) => f.tier)).toEqual(['cold']);
        expect(hotFile(again.dir, hour0[0]!.path)).toBe(false);
        const n = await json(again, 'POST', '/api/v1/query', { sql: `SELECT count(*) AS n FROM db1.cpu WHERE time < '2024-01-01 01:00:00'` });
        expect(n.body.data[0][0]).toBe(6);

        // Backup records the cold files as cold; a restore registers the cold objects as cold again.
        const afterDelete = await answers(again);
        const backup = await json(again, 'POST', '/api/v1/backup', {});
        expect(backup.status).toBe(202);
        const operation = async () => {
          let st: { status?: string } = {};
          await waitFor(async () => (st = (await json(again!, 'GET', '/api/v1/backup/status')).body).status !== 'running', 60_000, 'backup operation');
          return st;
        };
        expect(await operation()).toMatchObject({ status: 'completed' });
        const kept = JSON.parse(readFileSync(join(again.dir, 'data', 'backups', backup.body.backup_id, 'manifest.json'), 'utf8'));
        expect(kept.files.filter((f: { tier?: string }) => f.tier === 'cold')).toHaveLength(6);
        const restore = await json(again, 'POST', '/api/v1/backup/restore', { backup_id: backup.body.backup_id, confirm: true, restore_metadata: false });
        expect(restore.status).toBe(202);
        expect(await operation()).toMatchObject({ status: 'completed' });
        expect(manifest(again.dir).filter((f) => f.tier === 'cold')).toHaveLength(6);
        expect(await answers(again)).toEqual(afterDelete);

        // Late rows for a cold hour land in cold; compacting that hour writes its output to cold.
        const late = Array.from({ length: 5 }, (_, i) => `cpu,host=late v2=${i} ${T0_NS + 5n * H_NS + BigInt(i) * 1_000_000_000n + 7n}`).join('\n');
        expect((await again.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'db1' }, body: late })).status).toBe(204);
        expect((await again.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
        const hour5 = () => manifest(again!.dir).filter((f) => f.path.startsWith('db1/cpu/2024/01/01/05/'));
        expect(hour5().map((f) => f.tier)).toEqual(['cold', 'cold']);
        expect((await json(again, 'POST', '/api/v1/compaction/trigger', { database: 'db1' })).status).toBe(200);
        await waitFor(() => hour5().length === 1, 60_000, 'compaction of the cold hour');
        expect(hour5()[0]!.tier).toBe('cold');
        expect(hotFile(again.dir, hour5()[0]!.path)).toBe(false);
        const total = await json(again, 'POST', '/api/v1/query', { sql: 'SELECT count(*) AS n, count(v2) AS late FROM db1.cpu' });
        // 60 old rows + 1 recent, 4 deleted, 5 late.
        expect(total.body.data[0]).toEqual([62, 5]);

        // Retention removes cold files like hot ones.
        const policy = await json(again, 'POST', '/api/v1/retention', { name: 'old', database: 'db1', retention_days: 30 });
        expect(policy.status).toBe(201);
        expect((await json(again, 'POST', `/api/v1/retention/${policy.body.id}/execute`)).body).toMatchObject({ status: 'success' });
        expect(manifest(again.dir).filter((f) => f.tier === 'cold')).toHaveLength(0);
        expect((await json(again, 'POST', '/api/v1/query', { sql: 'SELECT count(*) AS n FROM db1.cpu' })).body.data[0][0]).toBe(1);
      } finally {
        await s.stop();
        await again?.stop();
      }
    }, 240_000);
  });
}

describe('tiering: the cold backend going away', () => {
  test('clear errors on /ready, status and the job; hot data still served; nothing lost; works again once back', async () => {
    const prefix = `away${Date.now().toString(36)}`;
    const env = { ...BASE, ...COLD.s3(prefix) };
    const s = await startServer({ env, keepDir: true });
    dirs.push(s.dir);
    try {
      await write(s);
      const job = await migrate(s, { database: 'db1', older_than_days: 30 });
      expect(job.files_moved).toBe(6);
      const before = await answers(s);
      // A fresh file that would move next, while the cold store is down.
      await s3.stop();
      try {
        // db2.mem's files cannot move: the job fails clearly, they stay hot and readable.
        const failed = await migrate(s, { database: 'db2', older_than_days: 30 });
        expect(failed).toMatchObject({ status: 'failed', files_moved: 0, failures: 3 });
        expect(failed.error).toContain('cannot move');
        expect(manifest(s.dir).filter((f) => f.database === 'db2').every((f) => f.tier === 'hot')).toBe(true);
        const mem = await json(s, 'POST', '/api/v1/query', { sql: 'SELECT count(*) AS n FROM db2.mem' });
        expect(mem.body.data[0][0]).toBe(30);
        // The failures mark the tier: /ready and the status say why.
        await waitFor(async () => (await s.fetch('/ready')).status === 503, 40_000, '/ready to notice');
        const ready = await json(s, 'GET', '/ready');
        expect(ready.body.reason).toContain('cold storage');
        const st = (await json(s, 'GET', '/api/v1/tiering/status')).body;
        expect(st.cold_state).not.toBe('healthy');
        expect(st.cold_error).toBeTruthy();
        // Cold files already in the read cache are still answered from it (cold data files never change).
        expect(await answers(s)).toEqual(before);
      } finally {
        await s3.start();
      }
      await waitFor(async () => (await s.fetch('/ready')).status === 200, 30_000, '/ready again');
      expect(await answers(s)).toEqual(before);
      expect((await migrate(s, { database: 'db2', older_than_days: 30 })).files_moved).toBe(3);
      // A new metadata file on the same hot and cold storage: the rebuilt manifest knows which files are cold.
      expect(await s.stop()).toBe(0);
      const fresh = await startServer({ env: { ...env, SVC_STORAGE_LOCAL_PATH: join(s.dir, 'data', 'svc') } });
      try {
        expect(manifest(fresh.dir).filter((f) => f.tier === 'cold'), fresh.output().split('\n').filter((l) => /manifest|cold|error/i.test(l)).join('\n')).toHaveLength(9);
        expect(await answers(fresh)).toEqual(before);
      } finally {
        await fresh.cleanup();
      }
    } finally {
      await s.stop();
    }
  }, 240_000);
});

describe('tiering: schedule and start-up', () => {
  test('the scheduled run moves what the policies say', async () => {
    const env = { ...BASE, ...COLD.s3(`sched${Date.now().toString(36)}`), SVC_TIERING_SCHEDULE: '*/2 * * * * *' };
    const s = await startServer({ env });
    try {
      await write(s);
      expect((await json(s, 'POST', '/api/v1/tiering/policies', { database: 'db2', hot_max_age_days: 1_000_000 })).status).toBe(201);
      await waitFor(async () => (await json(s, 'GET', '/api/v1/tiering/stats')).body.cold.files === 6, 30_000, 'the scheduled migration');
      expect((await json(s, 'GET', '/api/v1/tiering/status')).body.last_result).toMatchObject({ trigger: 'scheduled', status: 'completed' });
      expect(manifest(s.dir).filter((f) => f.tier === 'cold').every((f) => f.path.startsWith('db1/cpu/2024/'))).toBe(true);
    } finally {
      await s.cleanup();
    }
  }, 120_000);

  test('a cold backend unreachable at start: /ready and the status say so; a bad schedule stops the start', async () => {
    const closed = Bun.serve({ port: 0, fetch: () => new Response('') });
    const port = closed.port;
    closed.stop(true);
    const env = { ...BASE, ...COLD.s3('x'), SVC_TIERING_COLD_S3_ENDPOINT: `http://127.0.0.1:${port}` };
    const s = await startServer({ env, waitReady: false });
    try {
      await waitFor(async () => (await s.fetch('/ready').then((r) => r.status, () => 0)) === 503 && /cold storage/.test((await json(s, 'GET', '/ready')).body.reason ?? ''), 30_000, '/ready to name the cold tier');
      const st = (await json(s, 'GET', '/api/v1/tiering/status')).body;
      expect(st.cold_state).toBe('unreachable');
      expect(st.cold_error).toContain('ECONNREFUSED');
    } finally {
      await s.cleanup();
    }
    const bad = await startServer({ env: { ...BASE, ...COLD.s3('y'), SVC_TIERING_SCHEDULE: 'every day' }, waitReady: false }).catch((err: Error) => err);
    expect(String(bad)).toContain('tiering.schedule');
  }, 120_000);
});

describe('tiering: kill -9 during a move', () => {
  for (const step of ['after_begin', 'after_copy', 'after_switch'] as const) {
    test(`killed ${step}: exactly one copy is visible at restart, every row counted once`, async () => {
      const prefix = `k${step.replace('_', '')}${Date.now().toString(36)}`;
      const env = { ...BASE, ...COLD.s3(prefix), SVC_TIERING_MAX_CONCURRENT: '1' };
      const s = await startServer({ env: { ...env, SVC_TIERING_TEST_CRASH_AT: step }, keepDir: true });
      dirs.push(s.dir);
      await write(s);
      const before = await answers(s);
      // The first move may kill the process before the 202 is sent.
      const r = await json(s, 'POST', '/api/v1/tiering/migrate', { database: 'db1', older_than_days: 30, dry_run: false }).catch(() => null);
      if (r) expect(r.status).toBe(202);
      await waitFor(() => s.proc.exitCode !== null || s.proc.signalCode !== null, 30_000, 'the injected crash');
      expect(s.proc.signalCode).toBe('SIGKILL');

      const again = await startServer({ dir: s.dir, env });
      try {
        expect(await answers(again)).toEqual(before);
        const files = manifest(again.dir);
        expect(new Set(files.map((f) => f.path)).size).toBe(files.length);
        const cold = files.filter((f) => f.tier === 'cold');
        expect(cold).toHaveLength(step === 'after_switch' ? 1 : 0);
        // The copy that is not listed is gone: a cold file has no hot copy; no cold object besides listed ones.
        for (const f of cold) expect(hotFile(again.dir, f.path)).toBe(false);
        for (const f of files.filter((x) => x.tier === 'hot')) expect(hotFile(again.dir, f.path)).toBe(true);
        const tmp = mkdtempSync(join(tmpdir(), 'svc-cold-look-'));
        dirs.push(tmp);
        const { S3Backend } = await import('../src/storage/s3/s3-backend.ts');
        const remote = new S3Backend({ bucket: 'cold', region: 'us-east-1', endpoint: s3.endpoint, pathStyle: true, accessKey: 'S3RVER', secretKey: 'S3RVER' });
        const objects = (await remote.list(`${prefix}/`)).map((o) => o.key.slice(prefix.length + 1)).filter((k) => k.endsWith('.parquet'));
        expect(objects.sort()).toEqual(cold.map((f) => f.path).sort());
        // And the migration completes afterwards.
        const job = await migrate(again, { database: 'db1', older_than_days: 30 });
        expect(job.status).toBe('completed');
        expect(manifest(again.dir).filter((f) => f.tier === 'cold')).toHaveLength(6);
        expect(await answers(again)).toEqual(before);
      } finally {
        await again.stop();
      }
    }, 240_000);
  }
});

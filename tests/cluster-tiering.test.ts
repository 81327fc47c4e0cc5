/**
 * Tiered storage in a cluster end to end: etcd x3, one s3rver with a hot bucket (storage.*) and a cold
 * bucket (tiering.cold_*, shared by every node), and writer, reader and compactor processes. Rows of old
 * hours are written through the writer; a migration asked on the reader is forwarded to the active
 * compactor (the dry run's plan moves nothing; the real run is a job only the compactor knows, read
 * through the reader); the reader then lists the files cold through the shared manifest and answers
 * the same queries; the hot copies outlive the switch by cluster.file_grace_period and then go; a late
 * write for a cold hour lands cold; a compactor joining later and a fresh reader (the manifest snapshot)
 * see the same tiers; after a handover within the grace period the new compactor's next run deletes
 * the hot copies the old one kept. And the shared manifest refuses a switch to cold of a file another node has
 * just removed (a delete's rewrite on the writer while the compactor's copy lags), and a node with a
 * local cold tier does not start.
 */
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileManifestStore, migrations, openCatalog, type ManifestFile } from '../src/catalog/index.ts';
import { connectEtcd, SharedManifest } from '../src/cluster/index.ts';
import { clusterNodeEnv, etcdAvailable, startEtcd, type TestEtcd } from './helpers/etcd.ts';
import { count, flush, ns, query, writeLines } from './helpers/lifecycle.ts';
import { S3RVER_KEY, startS3rver, type TestS3 } from './helpers/s3rver.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { waitFor as until } from './helpers/until.ts';

const hasEtcd = etcdAvailable();
const H0 = Date.UTC(2024, 0, 1);
const HOUR = 3_600_000;
const OLD_HOURS = 4;
const GRACE_MS = 8000;

/** Queries whose answers must not change when files move to the cold tier. */
const CORPUS = [
  'SELECT count(*) AS n FROM tc.cpu',
  `SELECT host, round(avg(v), 6) AS a, count(*) AS n FROM tc.cpu WHERE time < '2024-01-02' GROUP BY host ORDER BY host`,
  `SELECT time_bucket(INTERVAL 1 HOUR, time) AS b, count(*) AS n, sum(v) AS s FROM tc.cpu WHERE time < '2024-01-02' GROUP BY b ORDER BY b`,
  `SELECT count(*) AS n FROM tc.cpu WHERE time >= '2024-01-01 01:00:00' AND time < '2024-01-01 03:00:00'`,
  `SELECT * FROM tc.cpu WHERE time < '2024-01-02' ORDER BY time DESC LIMIT 5`,
];

describe.skipIf(!hasEtcd)('tiering in a cluster (etcd x3, s3rver hot + cold buckets, writer, reader, compactor)', () => {
  let etcd: TestEtcd;
  let s3: TestS3;
  let writer: TestServer, reader: TestServer, compactor: TestServer;
  const extra: TestServer[] = [];
  /** SVC_STORAGE_* of the cold bucket, as the cold tier's SVC_TIERING_COLD_*. */
  const coldEnv = () => Object.fromEntries(Object.entries(s3.env('cold')).map(([k, v]) => [k.replace('SVC_STORAGE_', 'SVC_TIERING_COLD_'), v]));
  const envFor = (id: string, role: string) => ({
    ...s3.env('hot'),
    ...coldEnv(),
    SVC_TIERING_ENABLED: 'true',
    ...clusterNodeEnv(etcd, 'tiering', id, role),
    SVC_CLUSTER_FAILOVER_TIMEOUT: '3s',
    SVC_CLUSTER_FILE_GRACE_PERIOD: `${GRACE_MS}ms`,
    SVC_CLUSTER_SHARED_SECRET: 'tiering-cluster-secret',
    SVC_CLUSTER_MANIFEST_SNAPSHOT_INTERVAL: '300ms',
    SVC_COMPACTION_ENABLED: 'false',
    SVC_INGEST_MAX_BUFFER_AGE_MS: '600000',
  });
  const objects = async (bucket: 'hot' | 'cold') => {
    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: S3RVER_KEY.accessKey, secretAccessKey: S3RVER_KEY.secretKey } });
    const out = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    client.destroy();
    return (out.Contents ?? []).map((o) => o.Key!).filter((k) => k.startsWith('tc/') && k.endsWith('.parquet')).sort();
  };
  const files = async (node: TestServer, tier?: 'hot' | 'cold') => {
    const r = await json(node, 'GET', `/api/v1/tiering/files?database=tc${tier ? `&tier=${tier}` : ''}`);
    expect(r.status).toBe(200);
    return (r.body.files as { path: string; tier: string; hour: string; moved_at: string | null }[]).sort((a, b) => (a.path < b.path ? -1 : 1));
  };
  /** A migration of database tc asked on the reader (202, a job id), waited for through the reader. */
  const migrate = async () => {
    const started = await json(reader, 'POST', '/api/v1/tiering/migrate', { database: 'tc' });
    expect(started.status).toBe(202);
    return until('the migration job to finish', async () => {
      const j = await json(reader, 'GET', `/api/v1/tiering/jobs/${started.body.job_id}`);
      return j.status === 200 && j.body.status !== 'running' ? (j.body as Record<string, unknown>) : null;
    }, 60_000);
  };
  const answers = async (node: TestServer) => {
    const out: unknown[] = [];
    for (const sql of CORPUS) out.push(await query(node, sql));
    return out;
  };

  beforeAll(async () => {
    [etcd, s3] = await Promise.all([startEtcd(3), startS3rver(['hot', 'cold'])]);
    [writer, reader, compactor] = await Promise.all([
      startServer({ env: envFor('w1', 'writer') }),
      startServer({ env: envFor('r1', 'reader') }),
      startServer({ env: envFor('c1', 'compactor') }),
    ]);
    await until('c1 to be the active compactor, as the reader sees it', async () => (await json(reader, 'GET', '/api/v1/cluster')).body.compactor === 'c1');
  }, 120_000);

  afterAll(async () => {
    await Promise.all([writer, reader, compactor, ...extra].filter(Boolean).map((n) => n.cleanup()));
    await Promise.all([etcd?.stop(), s3?.close()]);
  });

  test('a migration asked on the reader runs on the compactor; every node sees the tiers; late rows land cold', async () => {
    // Four old hours of 10 rows each (one file per hour), and one recent row that stays hot.
    const lines: string[] = [];
    for (let h = 0; h < OLD_HOURS; h++) for (let i = 0; i < 10; i++) lines.push(`cpu,host=h${i % 3} v=${h * 10 + i} ${ns(H0 + h * HOUR + i * 60_000)}`);
    lines.push(`cpu,host=now v=1 ${ns(Date.now())}`);
    await writeLines(writer, 'tc', lines);
    await flush(writer);
    await until('the reader to see every row', async () => (await count(reader, 'SELECT count(*) AS n FROM tc.cpu')) === OLD_HOURS * 10 + 1);
    const before = await answers(reader);
    expect((await files(reader)).map((f) => f.tier)).toEqual(Array(OLD_HOURS + 1).fill('hot'));

    // A policy made on the reader is replicated: the compactor plans by it.
    const dryRun = () => json(reader, 'POST', '/api/v1/tiering/migrate', { database: 'tc', dry_run: true });
    const policy = await json(reader, 'POST', '/api/v1/tiering/policies', { database: 'tc', measurement: 'cpu', hot_max_age_days: 1_000_000 });
    expect(policy.status).toBe(201);
    await until('the compactor to plan by the replicated policy', async () => (await dryRun()).body.total_files === 0);
    expect((await json(reader, 'PUT', `/api/v1/tiering/policies/${policy.body.id}`, { database: 'tc', measurement: 'cpu', hot_max_age_days: 30 })).status).toBe(200);

    // The dry run, asked on the reader, is answered by the compactor: the plan, and nothing moves.
    const plan = await until('the compactor to plan by the changed policy', async () => {
      const r = await dryRun();
      return r.body.total_files === OLD_HOURS ? r : null;
    });
    expect(plan.status).toBe(200);
    expect(plan.headers.get('x-svc-forwarded-by')).toBe('r1');
    // The plan is the old hours' files themselves, and not the recent one.
    const all = (await files(reader)).map((f) => f.path);
    expect(plan.body.files.map((f: { path: string }) => f.path).sort()).toEqual(all.filter((p) => p.startsWith('tc/cpu/2024/01/01/')));
    expect(all.filter((p) => !p.startsWith('tc/cpu/2024/01/01/'))).toHaveLength(1);
    expect(await objects('cold')).toEqual([]);
    expect((await files(reader, 'cold')).length).toBe(0);

    // The real run: a job id from the compactor; its job is read through the reader (forwarded too).
    const job = await migrate();
    const jobId = job.id as string;
    expect(job).toMatchObject({ status: 'completed', files_moved: OLD_HOURS, failures: 0, bytes_moved: plan.body.total_bytes });
    // The hot copies outlive the switch by the grace period: queries on other nodes hold no lease on the compactor.
    const moved = plan.body.files.map((f: { path: string }) => f.path).sort();
    const hotNow = await objects('hot');
    expect(moved.filter((p: string) => !hotNow.includes(p))).toEqual([]);
    // The job is the compactor's record: asked directly, it answers too.
    expect((await json(compactor, 'GET', `/api/v1/tiering/jobs/${jobId}`)).status).toBe(200);
    const status = await json(reader, 'GET', '/api/v1/tiering/status');
    expect(status.body).toMatchObject({ enabled: true, hot_backend: 's3', cold_backend: 's3', running: false });
    expect(status.body.last_result).toMatchObject({ id: jobId, status: 'completed' });

    // The reader lists the moved files cold through the shared manifest, and answers the same.
    await until('the reader to list the moved files cold', async () => (await files(reader, 'cold')).length === OLD_HOURS);
    expect((await files(reader, 'cold')).map((f) => f.path)).toEqual(moved);
    expect((await files(writer, 'cold')).map((f) => f.path)).toEqual(moved);
    expect(await objects('cold')).toEqual(moved);
    expect(await answers(reader)).toEqual(before);

    // Once the grace period has passed the compactor deletes the hot copies, without another migration.
    await until('the hot copies to be deleted after the grace period', async () => (await objects('hot')).every((p) => !moved.includes(p)), 30_000);
    expect(await objects('cold')).toEqual(moved);
    expect(await answers(reader)).toEqual(before);

    // Late rows for a cold hour land in the cold bucket and are listed cold on every node.
    const late = Array.from({ length: 5 }, (_, i) => `cpu,host=late v=${1000 + i} ${ns(H0 + HOUR + 30 * 60_000 + i * 1000 + 7)}`);
    await writeLines(writer, 'tc', late);
    await flush(writer);
    await until('the reader to see the late rows', async () => (await count(reader, 'SELECT count(*) AS n FROM tc.cpu')) === OLD_HOURS * 10 + 6);
    const hour1 = (await files(reader)).filter((f) => f.path.startsWith('tc/cpu/2024/01/01/01/'));
    expect(hour1.map((f) => f.tier)).toEqual(['cold', 'cold']);
    const lateFile = hour1.find((f) => !moved.includes(f.path))!.path;
    expect(await objects('cold')).toContain(lateFile);
    expect(await objects('hot')).not.toContain(lateFile);
    const after = await answers(reader);
    expect(await count(reader, `SELECT count(*) AS n FROM tc.cpu WHERE host = 'late'`)).toBe(5);

    // A compactor joining now (a standby) and a fresh reader (loading the manifest snapshot) see the tiers.
    const c2 = await startServer({ env: envFor('c2', 'compactor') });
    extra.push(c2);
    const r2 = await startServer({ env: envFor('r2', 'reader') });
    extra.push(r2);
    const tiers = (fs: { path: string; tier: string }[]) => fs.map((f) => `${f.path}:${f.tier}`);
    const expected = tiers(await files(reader));
    expect(tiers(await files(c2))).toEqual(expected);
    expect(tiers(await files(r2))).toEqual(expected);
    expect(await answers(r2)).toEqual(after);

    // Two more old hours (another measurement) move, and the active compactor hands over within the
    // grace period: the hot copies it kept are deleted by the next migration of the new compactor.
    await writeLines(writer, 'tc', [0, 1].map((h) => `mem,host=m v=${h} ${ns(H0 + 48 * HOUR + h * HOUR)}`));
    await flush(writer);
    await until('the reader to see the mem rows', async () => (await files(reader)).length === expected.length + 2);
    const second = await migrate();
    expect(second).toMatchObject({ status: 'completed', files_moved: 2 });
    const memFiles = (await files(reader, 'cold')).filter((f) => f.path.startsWith('tc/mem/'));
    expect(memFiles).toHaveLength(2);
    expect(await compactor.stop()).toBe(0);
    await until('c2 to be the active compactor', async () => (await json(reader, 'GET', '/api/v1/cluster')).body.compactor === 'c2');
    expect((await objects('hot')).filter((p) => p.startsWith('tc/mem/'))).toHaveLength(2);
    const lastMove = Math.max(...memFiles.map((f) => Date.parse(f.moved_at!)));
    await Bun.sleep(Math.max(0, lastMove + GRACE_MS + 500 - Date.now()));
    // Nothing left to move; the run deletes the hot copies the node that left kept.
    expect((await dryRun()).body.total_files).toBe(0);
    expect(await migrate()).toMatchObject({ status: 'completed', files_moved: 0, failures: 0 });
    expect((await objects('hot')).filter((p) => p.startsWith('tc/mem/'))).toEqual([]);
    expect((await objects('cold')).filter((p) => p.startsWith('tc/mem/'))).toHaveLength(2);
    expect(await answers(reader)).toEqual(after);
    expect(await count(reader, 'SELECT count(*) AS n FROM tc.mem')).toBe(2);
  }, 120_000);

  test('a switch to cold of a file another node removed meanwhile is refused, not registered again', async () => {
    const client = await connectEtcd(etcd.endpoints, 5000);
    const dir = mkdtempSync(join(tmpdir(), 'svc-tiering-guard-'));
    const quiet = { info: () => {}, warn: () => {}, error: () => {} };
    // Two nodes' copies of one shared manifest (its own prefix): the writer deletes, the compactor moves.
    const node = (name: string) => {
      const local = new FileManifestStore(openCatalog(join(dir, `${name}.db`), migrations));
      const shared = new SharedManifest(client, '/svc-test/guard', local, quiet);
      local.setJournal(shared);
      return { local, shared };
    };
    const w = node('writer');
    const c = node('compactor');
    try {
      await Promise.all([w.shared.start(), c.shared.start()]);
      const f: ManifestFile = {
        path: 'g/m/2024/01/01/00/m_20240101_000000_000000001.parquet', database: 'g', measurement: 'm', hour: H0 * 1000,
        minTime: H0 * 1000, maxTime: H0 * 1000 + 1, rows: 2, bytes: 10, columns: ['time'], seq: 1, createdAt: new Date().toISOString(),
      };
      await w.local.commit([], [f]);
      await until('the compactor copy to list the file', async () => c.local.get(f.path));
      const listed = c.local.get(f.path)!;
      // The writer's delete rewrites the file under a new key; the compactor then switches what it listed.
      const rewritten = { ...f, path: f.path.replace('000000001', '000000002'), rows: 1, seq: 2 };
      await w.local.commit([f.path], [rewritten]);
      await expect(c.local.commit([f.path], [{ ...listed, tier: 'cold', movedAt: new Date().toISOString() }])).rejects.toThrow(/no longer registered/);
      await until('both copies to list only the rewritten file', async () =>
        [w, c].every((n) => n.local.listAll('g').map((x) => x.path).join() === rewritten.path));
      // A switch of a file still registered goes through.
      await c.local.commit([rewritten.path], [{ ...c.local.get(rewritten.path)!, tier: 'cold', movedAt: new Date().toISOString() }]);
      await until('the writer copy to list it cold', async () => w.local.get(rewritten.path)?.tier === 'cold');
    } finally {
      w.shared.close();
      c.shared.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  test('a cluster node with a local cold tier does not start (exit 2, one line)', async () => {
    const env = { ...envFor('local-cold', 'reader'), SVC_TIERING_COLD_BACKEND: 'local', SVC_TIERING_COLD_LOCAL_PATH: './cold' };
    const refused = await startServer({ env, waitReady: false }).catch((e: Error) => e);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toContain('exit 2');
    expect((refused as Error).message).toContain('tiering.cold_backend = s3 or azure');
  }, 30_000);
});

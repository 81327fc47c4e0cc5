/**
 * The shared manifest end to end: etcd x3, s3rver, and writer, reader and compactor processes. A
 * file flushed on the writer is queryable on the reader within 2 s; a compaction on the compactor
 * swaps files for every node at once (rows exactly once), and the replaced inputs stay in the bucket
 * for the grace period before the compactor deletes them; a node joining later loads the manifest.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connectEtcd } from '../src/cluster/index.ts';
import { clusterNodeEnv, etcdAvailable, startEtcd, type TestEtcd } from './helpers/etcd.ts';
import { count, flush, ns, query, writeLines } from './helpers/lifecycle.ts';
import { waitFor as until } from './helpers/until.ts';
import { S3RVER_KEY, startS3rver, type TestS3 } from './helpers/s3rver.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

const hasEtcd = etcdAvailable();
const H0 = Date.UTC(2024, 0, 1);

describe.skipIf(!hasEtcd)('shared manifest (etcd x3, s3rver, writer, reader, compactor)', () => {
  let etcd: TestEtcd;
  let s3: TestS3;
  let writer: TestServer, reader: TestServer, compactor: TestServer;
  const extra: TestServer[] = [];
  const envFor = (id: string, role: string) => ({
    ...s3.env('shared'),
    ...clusterNodeEnv(etcd, 'manifest', id, role),
    SVC_CLUSTER_FAILOVER_TIMEOUT: '3s',
    SVC_CLUSTER_FILE_GRACE_PERIOD: '3s',
    SVC_INGEST_MAX_BUFFER_AGE_MS: '600000',
    SVC_DELETE_ENABLED: 'true',
    SVC_COMPACTION_HOURLY_MIN_FILES: '2',
    SVC_CLUSTER_SHARED_SECRET: 'test-cluster-secret',
    SVC_CLUSTER_MANIFEST_SNAPSHOT_INTERVAL: '300ms',
  });
  const objects = async () => {
    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: S3RVER_KEY.accessKey, secretAccessKey: S3RVER_KEY.secretKey } });
    const out = await client.send(new ListObjectsV2Command({ Bucket: 'shared' }));
    client.destroy();
    return (out.Contents ?? []).map((o) => o.Key!).filter((k) => k.startsWith('metrics/') && k.endsWith('.parquet'));
  };

  beforeAll(async () => {
    [etcd, s3] = await Promise.all([startEtcd(3), startS3rver(['shared'])]);
    [writer, reader, compactor] = await Promise.all([
      startServer({ env: envFor('w1', 'writer') }),
      startServer({ env: envFor('r1', 'reader') }),
      startServer({ env: envFor('c1', 'compactor') }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([writer, reader, compactor, ...extra].filter(Boolean).map((n) => n.cleanup()));
    await Promise.all([etcd?.stop(), s3?.close()]);
  });

  // How soon the reader sees a flushed file is bench/cluster.bench.ts's replication line; here, that it does.
  test('a file flushed on the writer is queryable on the reader', async () => {
    for (let batch = 0; batch < 3; batch++) {
      const lines = Array.from({ length: 10 }, (_, i) => `cpu,host=h${i} v=${batch * 10 + i} ${ns(H0 + batch * 60_000 + i * 1000)}`);
      await writeLines(writer, 'metrics', lines);
      await flush(writer);
      const expected = (batch + 1) * 10;
      await until('the reader to see the flushed rows', async () => (await count(reader, 'SELECT count(*) AS n FROM metrics.cpu')) === expected);
    }
    expect(await objects()).toHaveLength(3);
    const status = await json(reader, 'GET', '/api/v1/cluster');
    expect(status.body.manifest_revision).toBeGreaterThan(0);
    // The manifest as the reader applied it, paged, admin only.
    const first = await json(reader, 'GET', '/api/v1/cluster/files?database=metrics&limit=2');
    expect(first.body).toMatchObject({ count: 2, total: 3, revision: status.body.manifest_revision });
    expect(first.body.files[0]).toMatchObject({ database: 'metrics', measurement: 'cpu', rows: 10, min_time: '2024-01-01T00:00:00.000Z' });
    const second = await json(reader, 'GET', `/api/v1/cluster/files?database=metrics&limit=2&after=${encodeURIComponent(first.body.next_after)}`);
    expect(second.body).toMatchObject({ count: 1, total: 3, next_after: null });
    expect([...first.body.files, ...second.body.files].map((f: { path: string }) => f.path).sort()).toEqual(await objects());
    expect((await json(reader, 'GET', '/api/v1/cluster/files?limit=5000')).status).toBe(400);
  });

  test('writes through the reader reach the writer; queries through the compactor are answered by a reader', async () => {
    const res = await reader.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'fwd' }, body: `m,host=a v=1 ${ns(H0)}\nm,host=b v=2 ${ns(H0 + 1000)}` });
    expect(res.status).toBe(204);
    expect(res.headers.get('x-svc-forwarded-by')).toBe('r1');
    // The rows are in the writer's buffer: the writer reads its own writes at once.
    expect(await count(writer, 'SELECT count(*) AS n FROM fwd.m')).toBe(2);
    await flush(reader); // forwarded too
    const q = await compactor.fetch('/api/v1/query', { method: 'POST', body: JSON.stringify({ sql: 'SELECT count(*) AS n FROM fwd.m' }), headers: { 'content-type': 'application/json' } });
    expect(q.status).toBe(200);
    expect(q.headers.get('x-svc-forwarded-by')).toBe('c1');
    expect(((await q.json()) as { data: number[][] }).data[0]![0]).toBe(2);
    // A client cannot pass itself off as a node: an unsigned x-svc-forwarded-by is just a client request, forwarded as usual.
    const forged = await reader.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'fwd', 'x-svc-forwarded-by': 'w1' }, body: `m,host=c v=3 ${ns(H0 + 2000)}` });
    expect(forged.status).toBe(204);
    expect(forged.headers.get('x-svc-forwarded-by')).toBe('r1');
    // The caller's identity travels: a bad token is refused, a read-only token may not write through any node.
    expect((await reader.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'fwd' }, body: 'm v=1', token: 'svc_not_a_token' })).status).toBe(401);
    const ro = await json(writer, 'POST', '/api/v1/auth/tokens', { name: 'fwd-readonly', permissions: ['read'] });
    await until('the token to reach the reader', async () => (await reader.fetch('/api/v1/auth/verify', { token: ro.body.token })).status === 200);
    expect((await reader.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'fwd' }, body: 'm v=1', token: ro.body.token })).status).toBe(403);
  });

  test('a compaction on the compactor swaps the files on every node at once; inputs outlive the swap by the grace period', async () => {
    const before = await objects();
    // Triggered on the reader: forwarded to the active compactor.
    const trig = await json(reader, 'POST', '/api/v1/compaction/trigger');
    expect(trig.status).toBe(200);
    await until('the compaction to finish', async () => {
      const h = await json(compactor, 'GET', '/api/v1/compaction/history');
      return (h.body.jobs ?? h.body.history ?? []).some((j: { job_id: string; status: string }) => j.job_id === trig.body.job_id && j.status !== 'running');
    }, 30_000);
    // Every node answers from one file now, with every row exactly once.
    for (const n of [reader, writer, compactor]) {
      expect(await count(n, 'SELECT count(*) AS n FROM metrics.cpu')).toBe(30);
      expect(await count(n, 'SELECT count(DISTINCT v) AS n FROM metrics.cpu')).toBe(30);
    }
    const after = await objects();
    expect(after.length).toBe(4); // three inputs kept for the grace period + the output
    await until('the inputs to be deleted after the grace period', async () => (await objects()).length === 1, 15_000);
    const left = await objects();
    expect(before).not.toContain(left[0]);
    expect(await count(reader, 'SELECT count(*) AS n FROM metrics.cpu')).toBe(30);
  }, 60_000);

  test('a node joining later loads the whole manifest, then follows changes', async () => {
    const late = await startServer({ env: envFor('r2', 'reader') });
    extra.push(late);
    expect(await count(late, 'SELECT count(*) AS n FROM metrics.cpu')).toBe(30);
    await writeLines(writer, 'metrics', [`cpu,host=late v=999 ${ns(H0 + 3_000_000)}`]);
    await flush(writer);
    await until('the late reader to follow', async () => (await count(late, 'SELECT count(*) AS n FROM metrics.cpu')) === 31);
  }, 60_000);

  test('a node joining later starts from the bucket snapshot; an unusable snapshot falls back to etcd', async () => {
    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: S3RVER_KEY.accessKey, secretAccessKey: S3RVER_KEY.secretKey } });
    const key = await until('the compactor to write a snapshot', async () => {
      const out = await client.send(new ListObjectsV2Command({ Bucket: 'shared' }));
      return (out.Contents ?? []).map((o) => o.Key!).find((k) => k.endsWith('_cluster/manifest/manifest-snapshot.json'));
    }, 5000);
    const readSnapshot = async () => JSON.parse(await (await client.send(new GetObjectCommand({ Bucket: 'shared', Key: key }))).Body!.transformToString()) as { revision: number; files: unknown[] };
    const applied = (await json(compactor, 'GET', '/api/v1/cluster')).body.manifest_revision as number;
    const old = await until('the snapshot to reach the compactor\'s revision', async () => {
      const snap = await readSnapshot();
      return snap.revision >= applied ? snap : null;
    }, 5000);
    // From the snapshot: the late node loads it, then replays what came after (nothing, or little).
    const s1 = await startServer({ env: envFor('r4', 'reader') });
    extra.push(s1);
    expect(s1.output()).toMatch(/shared manifest loaded.*from=snapshot/);
    expect(await count(s1, 'SELECT count(*) AS n FROM metrics.cpu')).toBe(31);
    // New changes, then etcd's history compacted past the old snapshot, which is put back: the joining
    // node's watch from its revision is refused, and it loads the manifest whole from etcd.
    await writeLines(writer, 'metrics', [`cpu,host=snap v=2000 ${ns(H0 + 3_200_000)}`]);
    await flush(writer);
    await until('the reader to see it', async () => (await count(reader, 'SELECT count(*) AS n FROM metrics.cpu')) === 32, 5000);
    const etcdClient = await connectEtcd(etcd.endpoints, 5000);
    const { revision } = await etcdClient.getPrefix('/svc/v1/manifest/manifest/files/', { limit: 1 });
    await etcdClient.compact(revision);
    await Bun.sleep(700); // the compactor's next snapshot tick, so it does not overwrite what is put back
    await client.send(new PutObjectCommand({ Bucket: 'shared', Key: key, Body: JSON.stringify(old) }));
    const s2 = await startServer({ env: envFor('r5', 'reader') });
    extra.push(s2);
    await until('the compacted history to be noticed', async () => /compacted past this node/.test(s2.output()), 5000);
    await until('the fallback reader to see every row', async () => (await count(s2, 'SELECT count(*) AS n FROM metrics.cpu')) === 32, 5000);
    // A snapshot that is not JSON is ignored.
    await client.send(new PutObjectCommand({ Bucket: 'shared', Key: key, Body: 'not json' }));
    const s3node = await startServer({ env: envFor('r6', 'reader') });
    extra.push(s3node);
    expect(s3node.output()).toMatch(/manifest snapshot is not valid JSON/);
    expect(await count(s3node, 'SELECT count(*) AS n FROM metrics.cpu')).toBe(32);
    client.destroy();
  }, 90_000);

  test('with query_gate_on_catchup a reader behind the manifest head answers queries 503 until it has applied it', async () => {
    const gated = await startServer({ env: { ...envFor('r3', 'reader'), SVC_CLUSTER_QUERY_GATE_ON_CATCHUP: 'true' } });
    extra.push(gated);
    expect(await count(gated, 'SELECT count(*) AS n FROM metrics.cpu')).toBe(32);
    // The head moves past anything the reader can apply (only a manifest change carries it along).
    const client = await connectEtcd(etcd.endpoints, 5000);
    await client.put('/svc/v1/manifest/manifest/head', '');
    const behind = await json(gated, 'POST', '/api/v1/query', { sql: 'SELECT count(*) AS n FROM metrics.cpu' });
    expect(behind.status).toBe(503);
    expect(behind.headers.get('retry-after')).toBe('1');
    expect(behind.body.error).toContain('has not caught up');
    // Readers without the gate answer as before; so do the gated reader's other routes.
    expect(await count(reader, 'SELECT count(*) AS n FROM metrics.cpu')).toBe(32);
    expect((await json(gated, 'GET', '/api/v1/cluster')).status).toBe(200);
    // The next manifest change (a flush on the writer) is applied, and with it the head.
    await writeLines(writer, 'metrics', [`cpu,host=gate v=1000 ${ns(H0 + 3_100_000)}`]);
    await flush(writer);
    await until('the gated reader to catch up', async () => (await count(gated, 'SELECT count(*) AS n FROM metrics.cpu')) === 33, 5000);
  }, 60_000);

  test('quorum lost: writes are refused with 503, not acknowledged; once it is back every acknowledged row is stored once', async () => {
    const acked: number[] = [];
    const refusedIds: number[] = [];
    let refused: Response | null = null;
    const write = async (i: number) => {
      const r = await writer.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'quorum' }, body: `q v=${i} ${ns(H0 + i * 1000)}` });
      if (r.status === 204) acked.push(i);
      else refusedIds.push(i);
      return r;
    };
    for (let i = 0; i < 5; i++) await write(i);
    await etcd.kill('m1');
    await etcd.kill('m2');
    for (let i = 5; i < 400 && !refused; i++) {
      const r = await write(i);
      if (r.status === 503) refused = r;
      await Bun.sleep(25);
    }
    expect(refused).not.toBeNull();
    expect(refused!.headers.get('retry-after')).toBe('1');
    expect(((await refused!.json()) as { error: string }).error).toContain('etcd quorum');
    await etcd.start('m1');
    await etcd.start('m2');
    await until('writes accepted again', async () => (await write(10_000)).status === 204, 30_000);
    await flush(writer);
    // Every acknowledged row is there, and no row twice. A write refused while etcd had no quorum is
    // not: its registration, had it committed once quorum was back, is withdrawn.
    const stored = await until('every acknowledged row on the reader', async () => {
      const vs = (await query(reader, 'SELECT v FROM quorum.q')).map((r) => Number(r.v));
      return acked.every((v) => vs.includes(v)) ? vs : null;
    }, 15_000);
    expect(new Set(stored).size).toBe(stored.length);
    expect(stored.filter((v) => refusedIds.includes(v))).toEqual([]);
  }, 90_000);

  test('a dropped database leaves every node', async () => {
    const res = await json(writer, 'DELETE', '/api/v1/databases/metrics?confirm=true');
    expect(res.status).toBe(200);
    await until('the reader to lose the database files', async () => {
      const r = await json(reader, 'POST', '/api/v1/query', { sql: 'SELECT count(*) AS n FROM metrics.cpu' });
      return r.status !== 200 || Number(r.body.data?.[0]?.[0]) === 0;
    }, 5000);
  }, 30_000);
});

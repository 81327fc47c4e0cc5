/**
 * A cluster's only writer that loses its lease (paused past failover_timeout, as a loaded machine can
 * do to it) must become the primary again on its own once it runs: real etcd x3, s3rver, one writer
 * and one reader (failover_timeout 3 s). After SIGCONT, writes through the reader succeed again within
 * a bounded time, and every acknowledged batch is stored exactly once; also when etcd fails the
 * writer's reads of its election right as it campaigns again (the writer reaches etcd through a proxy
 * per member that can refuse them, as a loaded etcd does), which used to leave the cluster with a
 * writer that held the election without ever leading again. And a flush whose registration went
 * through in etcd but whose answer was lost keeps its files (it used to delete them). And a write whose
 * shared WAL registration went unanswered is settled: acknowledged once if etcd holds it, else
 * withdrawn, so a 503 never turns into rows stored later (they used to come back at the next replay).
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connectEtcd } from '../src/cluster/index.ts';
import { clusterNodeEnv, etcdAvailable, startEtcd, type TestEtcd } from './helpers/etcd.ts';
import { startEtcdProxy, type EtcdProxy } from './helpers/etcd-proxy.ts';
import { flush, ns, query } from './helpers/lifecycle.ts';
import { S3RVER_KEY, startS3rver, type TestS3 } from './helpers/s3rver.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { waitFor as until } from './helpers/until.ts';

const hasEtcd = etcdAvailable();
const FAILOVER_TIMEOUT_MS = 3000;
const H0 = Date.UTC(2024, 4, 1);

describe.skipIf(!hasEtcd)('a lone writer that loses its lease (etcd x3, s3rver, one writer, one reader)', () => {
  let etcd: TestEtcd;
  let s3: TestS3;
  let writer: TestServer, reader: TestServer;
  let writerEnv: Record<string, string>;
  let proxies: EtcdProxy[] = [];
  const envFor = (id: string, role: string) => ({
    ...s3.env('lone'),
    ...clusterNodeEnv(etcd, 'lone', id, role),
    SVC_CLUSTER_FAILOVER_TIMEOUT: `${FAILOVER_TIMEOUT_MS}ms`,
    SVC_CLUSTER_SHARED_SECRET: 'lone-secret',
    SVC_CLUSTER_MANIFEST_SNAPSHOT_INTERVAL: '0',
    SVC_INGEST_MAX_BUFFER_AGE_MS: '600000',
  });

  beforeAll(async () => {
    [etcd, s3] = await Promise.all([startEtcd(3), startS3rver(['lone'])]);
    proxies = etcd.endpoints.map(startEtcdProxy);
    const viaProxies = { SVC_CLUSTER_ETCD_ENDPOINTS: proxies.map((p) => p.url).join(',') };
    writerEnv = { ...envFor('w1', 'writer'), ...viaProxies };
    [writer, reader] = await Promise.all([startServer({ env: writerEnv }), startServer({ env: envFor('r1', 'reader') })]);
  }, 120_000);

  afterAll(async () => {
    writer?.proc.kill('SIGCONT');
    if (process.env.SVC_TEST_DUMP_DIR) {
      const fs = await import('node:fs');
      fs.mkdirSync(process.env.SVC_TEST_DUMP_DIR, { recursive: true });
      if (writer) fs.writeFileSync(`${process.env.SVC_TEST_DUMP_DIR}/writer.log`, writer.output());
      if (reader) fs.writeFileSync(`${process.env.SVC_TEST_DUMP_DIR}/reader.log`, reader.output());
    }
    await Promise.all([writer, reader].filter(Boolean).map((n) => n.cleanup()));
    for (const p of proxies) p.stop();
    await Promise.all([etcd?.stop(), s3?.close()]);
  });

  const acked: number[] = [];
  let next = 0;
  /** Writes one batch tagged with its id through the reader; records it when acknowledged. */
  const write = async () => {
    const id = next++;
    const body = Array.from({ length: 5 }, (_, i) => `lone,batch=b${id} i=${i}i,id=${id}i ${ns(H0 + id * 10 + i)}`).join('\n');
    const res = await reader.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'lone' }, body });
    if (res.status === 204) acked.push(id);
    return res;
  };

  /** Pauses the writer past its lease, runs `onResume` as it resumes, and waits for writes through the reader to be acknowledged again. */
  const pauseAndRecover = async (onResume: () => void = () => {}) => {
    writer.proc.kill('SIGSTOP');
    await Bun.sleep(2 * FAILOVER_TIMEOUT_MS);
    onResume();
    writer.proc.kill('SIGCONT');
    const resumed = Date.now();
    await until('a write through the reader to be acknowledged again', async () => (await write()).status === 204, 30_000).catch((err) => {
      throw new Error(`${(err as Error).message}\n--- writer log ---\n${writer.output().slice(-6000)}\n--- reader log ---\n${reader.output().slice(-3000)}`);
    });
    console.log(`writes through the reader acknowledged again ${Date.now() - resumed} ms after SIGCONT`);
    expect((await json(reader, 'GET', '/api/v1/cluster')).body.writer).toBe('w1');
    for (let i = 0; i < 5; i++) expect((await write()).status).toBe(204);
  };

  /** Every acknowledged batch is on the reader, each with its 5 rows once. */
  const expectAcknowledgedOnce = async () => {
    // On the writer itself: a flush forwarded by the reader would get only the forwarding's answer
    // timeout (max(2 s, failover_timeout / 2)), which a loaded machine's flush can outlast.
    await flush(writer);
    const rows = await until('every acknowledged batch on the reader', async () => {
      const r = await query(reader, 'SELECT id, count(*) AS n FROM lone.lone GROUP BY id');
      return acked.every((id) => r.some((x) => Number(x.id) === id)) ? r : null;
    }, 15_000);
    for (const r of rows) expect(Number(r.n)).toBe(5);
  };

  test('paused past its lease, the lone writer leads again after SIGCONT; nothing acknowledged is lost or doubled', async () => {
    for (let i = 0; i < 5; i++) expect((await write()).status).toBe(204);
    await pauseAndRecover();
    await expectAcknowledgedOnce();
  }, 60_000);

  test('etcd failing the election reads as the resumed writer campaigns again only delays it', async () => {
    for (let i = 0; i < 5; i++) expect((await write()).status).toBe(204);
    await pauseAndRecover(() => {
      for (const p of proxies) p.failRanges('/svc/v1/lone/elections/writer/', 2 * FAILOVER_TIMEOUT_MS);
    });
    expect(proxies.reduce((n, p) => n + p.refused, 0)).toBeGreaterThan(0);
    expect(writer.output()).toContain('cannot follow the election; retrying');
    await expectAcknowledgedOnce();
  }, 60_000);

  test('a flush whose registering transaction went through but whose answer was lost keeps its files: every batch once, every file readable', async () => {
    for (let i = 0; i < 5; i++) expect((await write()).status).toBe(204);
    for (const p of proxies) p.loseTxnAnswers('/manifest/files/', 1);
    await flush(writer);
    expect(proxies.reduce((n, p) => n + p.lost, 0)).toBe(1);
    await expectAcknowledgedOnce();
    // A file deleted after its registration would fail this read of every file.
    const files = await query(reader, 'SELECT count(*) AS n FROM lone.lone');
    expect(Number(files[0]!.n)).toBe(acked.length * 5);
  }, 60_000);

  test('a shared WAL registration whose answer was lost is settled: acknowledged once when etcd holds it, withdrawn (never stored later) when the write was refused', async () => {
    for (let i = 0; i < 3; i++) expect((await write()).status).toBe(204);
    const segments = '/svc/v1/lone/wal/segments/';
    const failovers = async () => Number(/^svc_cluster_failovers_total (\d+)/m.exec(await (await writer.fetch('/metrics')).text())?.[1] ?? 0);
    const before = await failovers();

    // 1. The registration reaches etcd only after its answer timed out: the settling transaction gets
    // there first and withdraws it, so the late registration fails. The write is refused as certainly
    // not stored; the reader sends it again to the primary, and the client sees it acknowledged once.
    for (const p of proxies) p.holdTxns(segments, 1, 1500);
    expect((await write()).status).toBe(204);
    const held = await until('the held registration to reach etcd', async () => {
      const landed = proxies.flatMap((p) => p.held);
      return landed.length > 0 ? landed : null;
    });
    expect(held).toEqual([false]);
    // The writer stays the primary after it landed: its next write commits, with no step-down and no failover.
    expect((await write()).status).toBe(204);
    expect(writer.output()).not.toContain('was fenced');
    expect(await failovers()).toBe(before);

    // 2. etcd applies the registration but no answer gets back for 4 s, and reads of the segment keys
    // fail as well: the write is refused (503) and later withdrawn, so it is never stored.
    const refusedId = next;
    const body = Array.from({ length: 5 }, (_, i) => `lone,batch=b${refusedId} i=${i}i,id=${refusedId}i ${ns(H0 + refusedId * 10 + i)}`).join('\n');
    next++;
    for (const p of proxies) {
      p.loseTxnAnswersFor(segments, 4000);
      p.failRanges(segments, 4000);
    }
    const refused = await writer.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'lone' }, body });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: string }).error).toContain('etcd quorum');
    await until('the refused write to be withdrawn', async () => writer.output().includes('is withdrawn: it is not stored'), 15_000);

    // Two registered segments that can never be replayed (an object gone, an object that is not a
    // segment) must not keep the cluster without a primary: they are skipped, counted and left in place.
    const etcdClient = await connectEtcd(etcd.endpoints, 5000);
    const bucket = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: S3RVER_KEY.accessKey, secretAccessKey: S3RVER_KEY.secretKey } });
    await bucket.send(new PutObjectCommand({ Bucket: 'lone', Key: '_cluster/lone/wal/garbage.seg', Body: 'not a segment' }));
    bucket.destroy();
    for (const name of ['gone', 'garbage']) await etcdClient.put(segments + name, JSON.stringify({ object: `_cluster/lone/wal/${name}.seg`, entries: 1, node: 'w0', created_at: new Date().toISOString() }));

    // A crash and restart replays every registered segment not yet flushed: the withdrawn one is not.
    for (let i = 0; i < 2; i++) expect((await write()).status).toBe(204);
    await writer.kill();
    writer = await startServer({ dir: writer.dir, env: writerEnv });
    await until('the restarted writer to lead', async () => (await json(writer, 'GET', '/api/v1/cluster/local')).body.is_leader === true, 20_000).catch((err) => {
      throw new Error(`${(err as Error).message}\n--- writer log ---\n${writer.output().slice(-6000)}`);
    });
    await expectAcknowledgedOnce();
    const ids = (await query(reader, 'SELECT DISTINCT id FROM lone.lone')).map((r) => Number(r.id));
    expect(ids).not.toContain(refusedId);
    const metrics = await (await writer.fetch('/metrics')).text();
    expect(metrics).toMatch(/^svc_wal_shared_segments_unreadable_total 2$/m);
    expect(writer.output()).toContain('its object does not exist');
    await etcdClient.delete(segments + 'gone');
    await etcdClient.delete(segments + 'garbage');
    await until('no shared WAL segment left pending', async () => /^svc_wal_shared_segments_pending 0$/m.test(await (await writer.fetch('/metrics')).text()), 15_000);
  }, 90_000);
});

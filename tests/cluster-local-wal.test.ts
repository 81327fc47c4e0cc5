/**
 * A cluster writer with failover_enabled = false acknowledges writes once they are in its own WAL,
 * not in the shared WAL (no PUT or etcd transaction per write), against a real etcd, s3rver and svc
 * processes: a writer killed -9 and restarted replays its WAL and stores every acknowledged batch once;
 * shared WAL segments a crashed run with failover on left behind are replayed once when the node comes
 * back with failover off; a graceful stop hands over to a standby with nothing lost; a writer killed
 * right after registering a flush, or part way through a flush intent, replays none of its rows twice.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdClient } from '../src/cluster/etcd/etcd-client.ts';
import { clusterNodeEnv, etcdAvailable, startEtcd, type TestEtcd } from './helpers/etcd.ts';
import { flush, ns, query, writeLines } from './helpers/lifecycle.ts';
import { startS3rver, type TestS3 } from './helpers/s3rver.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { waitFor as until } from './helpers/until.ts';

const hasEtcd = etcdAvailable();
const H0 = Date.UTC(2024, 6, 1);

describe.skipIf(!hasEtcd)('a cluster writer with failover off keeps its own WAL (etcd, s3rver, writers and a reader)', () => {
  let etcd: TestEtcd;
  let s3: TestS3;
  let reader: TestServer;
  const nodes: Record<string, TestServer> = {};
  const dirs: Record<string, string> = {};

  const start = async (id: string, failover: boolean) => {
    dirs[id] ??= mkdtempSync(join(tmpdir(), `svc-local-wal-${id}-`));
    nodes[id] = await startServer({
      dir: dirs[id],
      keepDir: true,
      env: {
        ...s3.env('lwal'),
        ...clusterNodeEnv(etcd, 'lwal', id, 'writer'),
        SVC_CLUSTER_FAILOVER_ENABLED: String(failover),
        SVC_CLUSTER_FAILOVER_TIMEOUT: '3s',
        SVC_CLUSTER_SHARED_SECRET: 'lwal-secret',
        SVC_CLUSTER_MANIFEST_SNAPSHOT_INTERVAL: '0',
        SVC_WAL_ENABLED: 'true',
        // Nothing is flushed on its own: every row a crash could lose is still unflushed.
        SVC_INGEST_MAX_BUFFER_AGE_MS: '600000',
      },
    });
    await until(`${id} to lead or stand by`, async () => ((await json(nodes[id]!, 'GET', '/api/v1/cluster')).body.writer ?? null) !== null, 20_000);
    return nodes[id]!;
  };

  beforeAll(async () => {
    [etcd, s3] = await Promise.all([startEtcd(1), startS3rver(['lwal'])]);
    reader = await startServer({ env: { ...s3.env('lwal'), ...clusterNodeEnv(etcd, 'lwal', 'r', 'reader'), SVC_CLUSTER_SHARED_SECRET: 'lwal-secret', SVC_CLUSTER_MANIFEST_SNAPSHOT_INTERVAL: '0' } });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([reader, ...Object.values(nodes)].filter(Boolean).map((n) => n.cleanup()));
    await Promise.all([etcd?.stop(), s3?.close()]);
    for (const d of Object.values(dirs)) rmSync(d, { recursive: true, force: true });
  });

  const acked: number[] = [];
  let next = 0;
  /** Writes one batch of 5 rows tagged with its id through the reader; records it when acknowledged. */
  const write = async () => {
    const id = next++;
    const body = Array.from({ length: 5 }, (_, i) => `lw,batch=b${id} i=${i}i,id=${id}i ${ns(H0 + id * 10 + i)}`).join('\n');
    const res = await reader.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'lwal' }, body });
    expect(res.status).toBe(204);
    acked.push(id);
  };
  const sharedCommits = async (s: TestServer) => Number(/^svc_wal_shared_commits_total(?:\{[^}]*\})? (\S+)$/m.exec(await (await s.fetch('/metrics')).text())?.[1] ?? 0);
  /** Every acknowledged batch is on the reader with its 5 rows, once. */
  const expectAcknowledgedOnce = async (writer: TestServer) => {
    await flush(writer);
    const rows = await until('every acknowledged batch on the reader', async () => {
      const r = await query(reader, 'SELECT id, count(*) AS n FROM lwal.lw GROUP BY id ORDER BY id');
      return acked.every((id) => r.some((x) => Number(x.id) === id)) ? r : null;
    }, 20_000);
    expect(rows.map((r) => Number(r.id))).toEqual(acked);
    for (const r of rows) expect(Number(r.n)).toBe(5);
  };

  test('shared WAL segments a crash left are replayed once with failover off; then writes skip the shared WAL and survive kill -9 through the local WAL', async () => {
    // A run with failover on: acknowledged through the shared WAL, then a crash before any flush.
    let w = await start('w', true);
    for (let i = 0; i < 4; i++) await write();
    expect(await sharedCommits(w)).toBeGreaterThan(0);
    await w.kill();

    // Back with failover off: it leads again, replaying and flushing the shared WAL's rows first.
    w = await start('w', false);
    await until('w to lead again', async () => (await json(w, 'GET', '/api/v1/cluster/local')).body.is_leader === true, 20_000);
    expect(w.output()).toContain('not in the shared WAL');
    for (let i = 0; i < 4; i++) await write();
    expect(await sharedCommits(w)).toBe(0);
    await w.kill();

    // The rows acknowledged with failover off come back from the node's own WAL.
    w = await start('w', false);
    await until('w to lead again', async () => (await json(w, 'GET', '/api/v1/cluster/local')).body.is_leader === true, 20_000);
    await expectAcknowledgedOnce(w);
    expect(await sharedCommits(w)).toBe(0);
  }, 120_000);

  test('a graceful stop of the primary flushes and hands over to a standby; nothing lost or doubled', async () => {
    const standby = await start('s', false);
    expect((await json(standby, 'GET', '/api/v1/cluster')).body.writer).toBe('w');
    for (let i = 0; i < 4; i++) await write();
    expect(await nodes.w!.stop()).toBe(0);
    await until('the standby to lead', async () => (await json(standby, 'GET', '/api/v1/cluster/local')).body.is_leader === true, 20_000);
    for (let i = 0; i < 2; i++) await write();
    await expectAcknowledgedOnce(standby);
  }, 60_000);

  /** Rows per hour of `db.m` on `n`. */
  const perHour = async (n: TestServer, db: string) => {
    const rows = await query(n, `SELECT CAST(floor(epoch_ms(time) / 3600000) AS BIGINT) AS h, count(*) AS n FROM ${db}.m GROUP BY h`);
    return new Map(rows.map((r) => [Number(r.h) - H0 / 3_600_000, Number(r.n)]));
  };

  /** A failover-off writer killed (-9, by a failpoint) in the middle of flushing `hours` hour-files of 3 rows, then restarted. */
  const crashInFlush = async (failpoint: string, hours: number) => {
    const name = `lwal-${failpoint.split(/[.:]/)[1]}`;
    const db = name.replaceAll('-', '_');
    const dir = mkdtempSync(join(tmpdir(), `svc-local-wal-${name}-`));
    dirs[name] = dir;
    const env = (extra: Record<string, string>) => ({
      ...s3.env('lwal', name),
      ...clusterNodeEnv(etcd, name, 'w', 'writer'),
      SVC_CLUSTER_FAILOVER_ENABLED: 'false',
      SVC_CLUSTER_FAILOVER_TIMEOUT: '2s',
      SVC_CLUSTER_MANIFEST_SNAPSHOT_INTERVAL: '0',
      SVC_WAL_ENABLED: 'true',
      SVC_INGEST_MAX_BUFFER_AGE_MS: '600000',
      ...extra,
    });
    const leads = async (n: TestServer) => (await json(n, 'GET', '/api/v1/cluster/local')).body.is_leader === true;
    let w = await startServer({ dir, keepDir: true, env: env({ SVC_FAILPOINT: failpoint }) });
    nodes[name] = w;
    await until(`${name} to lead`, () => leads(w), 20_000);
    const lines: string[] = [];
    for (let h = 0; h < hours; h++) for (let i = 0; i < 3; i++) lines.push(`m,hour=h${h} v=${i}i ${ns(H0 + h * 3_600_000 + i * 1000)}`);
    await writeLines(w, db, lines);
    await w.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' }).catch(() => null);
    await w.proc.exited;
    expect(w.proc.signalCode).toBe('SIGKILL');

    w = await startServer({ dir, keepDir: true, env: env({}) });
    nodes[name] = w;
    await until(`${name} to lead again`, () => leads(w), 20_000);
    const exactlyOnce = async () => {
      const seen = await perHour(w, db);
      expect([...seen].filter(([h, n]) => n !== 3 || h < 0 || h >= hours)).toEqual([]);
      expect(seen.size).toBe(hours);
    };
    await exactlyOnce();
    await flush(w);
    await exactlyOnce();
    // The coverage records go once their entries' release records are on disk.
    const client = new EtcdClient({ endpoints: etcd.endpoints });
    await until('the local WAL coverage records to be swept', async () => (await client.getPrefix(`/svc/v1/${name}/local-wal/`)).kvs.length === 0, 30_000);
  };

  test('killed after a flush registered in one transaction, or part way through a flush intent, the restarted writer replays none of the flushed rows twice', async () => {
    await Promise.all([crashInFlush('manifest.after_commit:1', 5), crashInFlush('manifest.after_chunk:1', 150)]);
  }, 90_000);
});

/**
 * cluster.failover_enabled and cluster.failover_cooldown applied to the writer election, end to end:
 * a real three-member etcd, s3rver and two writers (failover_timeout 3 s), one cluster per setting.
 * With failover off, a killed primary is not replaced: writes answer 503 with Retry-After, until the
 * primary comes back (it leads again) or an operator forgets it (DELETE
 * /api/v1/cluster/elections/writer/holder); a graceful stop still
 * hands over. With a long cooldown, a primary elected seconds ago that is killed or paused past its
 * lease is still replaced at once: the cooldown never leaves the cluster without a primary.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdClient } from '../src/cluster/etcd/etcd-client.ts';
import { clusterNodeEnv, etcdAvailable, startEtcd, type TestEtcd } from './helpers/etcd.ts';
import { ns } from './helpers/lifecycle.ts';
import { startS3rver, type TestS3 } from './helpers/s3rver.ts';
import { startServer, type TestServer } from './helpers/server.ts';
import { waitFor as until } from './helpers/until.ts';

const hasEtcd = etcdAvailable();
const FAILOVER_TIMEOUT_MS = 3000;

describe.skipIf(!hasEtcd)('writer failover settings (etcd x3, s3rver, two writers)', () => {
  let etcd: TestEtcd;
  let s3: TestS3;
  const servers: TestServer[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    [etcd, s3] = await Promise.all([startEtcd(3), startS3rver(['off', 'cooldown', 'flap'])]);
  }, 60_000);

  afterAll(async () => {
    for (const s of servers) {
      s.proc.kill('SIGCONT');
      await s.kill();
    }
    await Promise.all([etcd?.stop(), s3?.close()]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** A two-writer cluster named `name` (its own bucket) with `extra` settings (they may override the failover timeout). */
  const clusterOf = (name: string, extra: Record<string, string>) => {
    const nodes: Record<string, TestServer> = {};
    const nodeDirs: Record<string, string> = {};
    const start = async (id: string) => {
      nodeDirs[id] ??= mkdtempSync(join(tmpdir(), `svc-failover-settings-${id}-`));
      dirs.push(nodeDirs[id]);
      const s = await startServer({
        dir: nodeDirs[id],
        env: {
          ...s3.env(name),
          ...clusterNodeEnv(etcd, name, id, 'writer'),
          SVC_CLUSTER_FAILOVER_TIMEOUT: `${FAILOVER_TIMEOUT_MS}ms`,
          SVC_CLUSTER_SHARED_SECRET: 'settings-secret',
          SVC_CLUSTER_MANIFEST_SNAPSHOT_INTERVAL: '0',
          ...extra,
        },
      });
      servers.push(s);
      nodes[id] = s;
      return s;
    };
    const writer = async (via: string) => ((await (await nodes[via]!.fetch('/api/v1/cluster')).json()) as { writer: string | null }).writer;
    const isLeader = async (id: string) => ((await (await nodes[id]!.fetch('/api/v1/cluster/local')).json()) as { is_leader: boolean }).is_leader;
    let batch = 0;
    const write = (via: string) =>
      nodes[via]!.fetch('/api/v1/write/line-protocol', {
        method: 'POST',
        headers: { 'x-svc-database': 'settings', 'content-type': 'text/plain' },
        body: `probe,batch=b${batch++} v=1i ${ns(Date.UTC(2024, 2, 1) + batch)}`,
      });
    return { nodes, start, writer, isLeader, write };
  };

  test('failover_enabled = false: no takeover after a crash; the primary returns, an operator promotes, a graceful stop hands over', async () => {
    const c = clusterOf('off', { SVC_CLUSTER_FAILOVER_ENABLED: 'false' });
    await c.start('a');
    await until('a to lead', () => c.isLeader('a'));
    await c.start('b');
    expect((await c.write('b')).status).toBe(204);

    // A crash of the primary: its lease lapses, and b does not take over on its own.
    await c.nodes.a!.kill();
    await until('b to stand aside', async () => c.nodes.b!.output().includes('failover is disabled'), 20_000);
    expect(await c.writer('b')).toBeNull();
    expect(await c.isLeader('b')).toBe(false);
    const refused = await c.write('b');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.text()).toContain('no primary writer');

    // The primary comes back (same node id) and leads again; b stays a standby.
    await c.start('a');
    await until('a to lead again', async () => (await c.isLeader('a')) && (await c.writer('b')) === 'a');
    expect((await c.write('b')).status).toBe(204);
    expect(await c.isLeader('b')).toBe(false);

    // An operator cannot forget a holder that leads; after another crash it can, and b takes over.
    const release = () => c.nodes.b!.fetch('/api/v1/cluster/elections/writer/holder', { method: 'DELETE' });
    const live = await release();
    expect(live.status).toBe(409);
    expect(await live.text()).toContain('holder a holds its lease');
    expect((await c.nodes.b!.fetch('/api/v1/cluster/elections/leader/holder', { method: 'DELETE' })).status).toBe(400);
    await c.nodes.a!.kill();
    await until('b to stand aside again', async () => c.nodes.b!.output().split('failover is disabled').length === 3, 20_000);
    const released = await release();
    expect(released.status).toBe(200);
    expect(await released.json()).toMatchObject({ election: 'writer', holder: 'a' });
    await until('b to take over', async () => (await c.isLeader('b')) && (await c.writer('b')) === 'b');
    expect((await c.write('b')).status).toBe(204);

    // The old primary restarts as a standby behind b; a graceful stop of b hands over to it at once.
    await c.start('a');
    expect(await c.isLeader('a')).toBe(false);
    expect(await c.writer('a')).toBe('b');
    expect(await c.nodes.b!.stop()).toBe(0);
    await until('a to take over from the graceful stop', async () => (await c.isLeader('a')) && (await c.writer('a')) === 'a');
    expect((await c.write('a')).status).toBe(204);
    await c.nodes.a!.stop();
  }, 120_000);

  test('failover_cooldown = 10m: a primary elected seconds ago that dies or pauses past its lease is still replaced', async () => {
    const c = clusterOf('cooldown', { SVC_CLUSTER_FAILOVER_COOLDOWN: '10m' });
    await c.start('a');
    await until('a to lead', () => c.isLeader('a'));
    await c.start('b');

    await c.nodes.a!.kill();
    await until('b to take over inside the cooldown', async () => (await c.isLeader('b')) && (await c.writer('b')) === 'b', 20_000);
    expect((await c.write('b')).status).toBe(204);

    // b, elected just now, pauses past its lease: the restarted a takes over, and b resumes as a standby.
    await c.start('a');
    c.nodes.b!.proc.kill('SIGSTOP');
    await until('a to take over from the paused b', async () => (await c.isLeader('a')) && (await c.writer('a')) === 'a', 20_000);
    c.nodes.b!.proc.kill('SIGCONT');
    expect((await c.write('a')).status).toBe(204);
    await until('b to resume as a standby naming a', async () => (await c.writer('b')) === 'a' && !(await c.isLeader('b')), 20_000);
  }, 120_000);

  test('failover_cooldown: a primary elected just now whose lease lapsed but that is back keeps the role; the cooldown counts from its first election', async () => {
    // A 9 s lease is renewed every 3 s, so b survives the pause below that lets a come back first.
    const c = clusterOf('flap', { SVC_CLUSTER_FAILOVER_COOLDOWN: '10m', SVC_CLUSTER_FAILOVER_TIMEOUT: '9s' });
    await c.start('a');
    await until('a to lead', () => c.isLeader('a'));
    await c.start('b');
    const client = new EtcdClient({ endpoints: etcd.endpoints });
    const candidates = async () => (await client.getPrefix('/svc/v1/flap/elections/writer/')).kvs;
    const record = async () => JSON.parse((await client.get('/svc/v1/flap/primaries/writer'))!.value) as { node_id: string; elected_at: number };
    const first = await record();
    expect(first.node_id).toBe('a');
    const oldKey = (await candidates()).find((kv) => kv.value === 'a')!.key;

    // a's lease lapses (revoked as etcd would expire it) while b cannot act; a notices and campaigns again.
    c.nodes.b!.proc.kill('SIGSTOP');
    await client.leaseRevoke(oldKey.split('/').pop()!);
    await until('a to be a candidate again', async () => (await candidates()).some((kv) => kv.value === 'a' && kv.key !== oldKey), 5500).finally(() => c.nodes.b!.proc.kill('SIGCONT'));

    // b, now first in line, lets a lead: a was elected less than the cooldown ago and is back.
    await until('b to yield to a', async () => c.nodes.b!.output().includes('lets it lead until the cooldown ends'), 20_000);
    await until('a to lead again', async () => (await c.isLeader('a')) && (await c.writer('b')) === 'a', 20_000);
    expect(await c.isLeader('b')).toBe(false);
    expect((await c.write('b')).status).toBe(204);
    expect(await record()).toEqual(first);
  }, 90_000);
});

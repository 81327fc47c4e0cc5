/**
 * Cluster membership end to end: a real three-member etcd, s3rver for the bucket, and separate svc
 * processes (writer, reader, two compactors), each with its own data directory. Checks the
 * cluster routes, the election of one active compactor and its takeover after a kill -9, a graceful
 * leave, the removal of a dead node's record, and the startup errors of a cluster that cannot work.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connectEtcd } from '../src/cluster/index.ts';
import { clusterNodeEnv, etcdAvailable, startEtcd, type TestEtcd } from './helpers/etcd.ts';
import { count, flush, ns, writeLines } from './helpers/lifecycle.ts';
import { waitFor as until } from './helpers/until.ts';
import { startS3rver, type TestS3 } from './helpers/s3rver.ts';
import { startServer, type TestServer } from './helpers/server.ts';

const hasEtcd = etcdAvailable();

const get = async (s: TestServer, path: string) => {
  const res = await s.fetch(path);
  return { status: res.status, body: (await res.json()) as any };
};

describe.skipIf(!hasEtcd)('cluster membership (etcd x3, s3rver, four svc processes)', () => {
  let etcd: TestEtcd;
  let s3: TestS3;
  const nodes: Record<string, TestServer> = {};
  const envFor = (id: string, role: string) => ({
    ...s3.env('cluster'),
    ...clusterNodeEnv(etcd, 'itest', id, role),
    SVC_CLUSTER_FAILOVER_TIMEOUT: '3s',
    SVC_COMPACTION_HOURLY_MIN_FILES: '2',
  });

  beforeAll(async () => {
    [etcd, s3] = await Promise.all([startEtcd(3), startS3rver(['cluster'])]);
    const started = await Promise.all([
      startServer({ env: envFor('writer-1', 'writer') }),
      startServer({ env: envFor('reader-1', 'reader') }),
      startServer({ env: envFor('compactor-a', 'compactor') }),
    ]);
    [nodes.writer, nodes.reader, nodes.compactorA] = started;
    // The second compactor joins last, so the first one leads.
    await until('compactor-a to lead', async () => (await get(nodes.reader!, '/api/v1/cluster')).body.compactor === 'compactor-a');
    nodes.compactorB = await startServer({ env: envFor('compactor-b', 'compactor') });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(Object.values(nodes).map((n) => n.cleanup()));
    await Promise.all([etcd?.stop(), s3?.close()]);
  });

  test('every node sees the same cluster: members by role and state, the active writer and compactor, etcd', async () => {
    const members = [
      { id: 'compactor-a', role: 'compactor', state: 'healthy' },
      { id: 'compactor-b', role: 'compactor', state: 'healthy' },
      { id: 'reader-1', role: 'reader', state: 'healthy' },
      { id: 'writer-1', role: 'writer', state: 'healthy' },
    ];
    for (const n of Object.values(nodes)) {
      const { body } = await until('four healthy nodes', async () => {
        const r = await get(n, '/api/v1/cluster');
        return r.body.nodes?.by_state?.healthy === 4 ? r : null;
      });
      // Who the four are, by id, role and state, as this node lists them.
      const listed = (await get(n, '/api/v1/cluster/nodes')).body.nodes as { id: string; role: string; state: string }[];
      expect(listed.map(({ id, role, state }) => ({ id, role, state })).sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual(members);
      expect(body.cluster).toBe('itest');
      expect(body.writer).toBe('writer-1');
      expect(body.compactor).toBe('compactor-a');
      expect(body.nodes).toEqual({ total: 4, by_role: { writer: 1, reader: 1, compactor: 2 }, by_state: { healthy: 4 } });
      expect(body.etcd.healthy).toBe(true);
      expect(body.etcd.members).toBe(3);
      expect(body.etcd.endpoints).toEqual(etcd.endpoints);
      expect(typeof body.etcd.leader).toBe('string');
    }
    const local = await get(nodes.compactorA!, '/api/v1/cluster/local');
    expect(local.body).toMatchObject({ id: 'compactor-a', role: 'compactor', state: 'healthy', is_leader: true });
    expect((await get(nodes.compactorB!, '/api/v1/cluster/local')).body.is_leader).toBe(false);
  });

  test('node listing filters by role and state; an invalid filter lists the valid values; unknown id 404', async () => {
    const readers = await get(nodes.writer!, '/api/v1/cluster/nodes?role=compactor');
    expect(readers.body.count).toBe(2);
    expect(readers.body.nodes.map((n: { id: string }) => n.id).sort()).toEqual(['compactor-a', 'compactor-b']);
    const one = await get(nodes.writer!, '/api/v1/cluster/nodes/reader-1');
    expect(one.body).toMatchObject({ id: 'reader-1', role: 'reader', state: 'healthy', version: expect.any(String) });
    expect(one.body.address).toBe(nodes.reader!.url);
    expect(Date.parse(one.body.last_heartbeat)).toBeGreaterThan(Date.now() - 10_000);
    const bad = await get(nodes.writer!, '/api/v1/cluster/nodes?role=leader');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('writer, reader, compactor');
    const badState = await get(nodes.writer!, '/api/v1/cluster/nodes?state=sleepy');
    expect(badState.status).toBe(400);
    expect(badState.body.error).toContain('joining, healthy, unhealthy, dead, leaving');
    expect((await get(nodes.writer!, '/api/v1/cluster/nodes/nobody')).status).toBe(404);
    const health = await get(nodes.reader!, '/api/v1/cluster/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ healthy: true, node_id: 'reader-1', etcd: { reachable: true, members: 3 } });
  });

  test('the routes need a token, and removing a node needs an admin', async () => {
    expect((await nodes.reader!.fetch('/api/v1/cluster', { token: null })).status).toBe(401);
    const created = await nodes.reader!.fetch('/api/v1/auth/tokens', { method: 'POST', body: JSON.stringify({ name: 'cluster-reader', permissions: ['read'] }), headers: { 'content-type': 'application/json' } });
    const token = ((await created.json()) as { token: string }).token;
    expect((await nodes.reader!.fetch('/api/v1/cluster', { token })).status).toBe(200);
    expect((await nodes.reader!.fetch('/api/v1/cluster/nodes/writer-1', { method: 'DELETE', token })).status).toBe(403);
  });

  // How soon a change reaches the other nodes is bench/cluster.bench.ts's replication line; here, that it does.
  test('a token created on one node works on every node; rotated or revoked anywhere, everywhere', async () => {
    const post = (n: TestServer, path: string, body?: unknown) =>
      n.fetch(path, { method: 'POST', body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    const created = await post(nodes.writer!, '/api/v1/auth/tokens', { name: 'replicated', permissions: ['read'] });
    expect(created.status).toBe(201);
    const { token, id } = (await created.json()) as { token: string; id: string };
    // The 201 is sent once etcd has the row; the other nodes apply it from their watch.
    await until('the token to work on the reader', async () => (await nodes.reader!.fetch('/api/v1/auth/verify', { token })).status === 200);
    for (const n of [nodes.compactorA!, nodes.compactorB!]) await until('the token on the compactors', async () => (await n.fetch('/api/v1/auth/verify', { token })).status === 200);
    // Rotated on the reader: the old value stops working on the writer, the new one works there.
    const rotated = await post(nodes.reader!, `/api/v1/auth/tokens/${id}/rotate`);
    expect(rotated.status).toBe(200);
    const fresh = ((await rotated.json()) as { token: string }).token;
    await until('the old value refused on the writer', async () => (await nodes.writer!.fetch('/api/v1/auth/verify', { token })).status === 401);
    await until('the new value accepted on the writer', async () => (await nodes.writer!.fetch('/api/v1/auth/verify', { token: fresh })).status === 200);
    // Deleted on the compactor: refused everywhere.
    expect((await nodes.compactorA!.fetch(`/api/v1/auth/tokens/${id}`, { method: 'DELETE' })).status).toBe(200);
    for (const n of [nodes.writer!, nodes.reader!, nodes.compactorB!]) await until('the deleted token refused', async () => (await n.fetch('/api/v1/auth/verify', { token: fresh })).status === 401);
    // A database created on one node is known on the others.
    const db = await post(nodes.reader!, '/api/v1/databases', { name: 'replicated_db' });
    expect(db.status).toBe(201);
    await until('the database listed on the writer', async () => {
      const r = await nodes.writer!.fetch('/api/v1/databases');
      return ((await r.json()) as { databases: { name: string }[] }).databases.some((d) => d.name === 'replicated_db');
    });
  });

  test('RBAC records replicate: a role set on one node narrows the token on every node, and survives the token rotated elsewhere', async () => {
    const post = async (n: TestServer, path: string, body?: unknown) => {
      const res = await n.fetch(path, { method: 'POST', body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      const out = (await res.json()) as { id: string; token: string };
      if (res.status >= 300) throw new Error(`${path} on ${n.url}: ${res.status} ${JSON.stringify(out)}`);
      return out;
    };
    const { id, token } = await post(nodes.writer!, '/api/v1/auth/tokens', { name: 'rbac-replicated', permissions: ['read', 'write'] });
    const org = await post(nodes.writer!, '/api/v1/rbac/organizations', { name: 'rep-org' });
    const team = await post(nodes.writer!, `/api/v1/rbac/organizations/${org.id}/teams`, { name: 'rep-team' });
    const role = await post(nodes.writer!, `/api/v1/rbac/teams/${team.id}/roles`, { name: 'only-db2', database_pattern: 'db2', permissions: ['read'] });
    await post(nodes.writer!, `/api/v1/rbac/roles/${role.id}/measurements`, { measurement_pattern: 'cpu*', permissions: ['read'] });
    await post(nodes.writer!, `/api/v1/rbac/teams/${team.id}/members`, { token_id: id });
    const check = (n: TestServer, db: string) => get(n, `/api/v1/rbac/check?token_id=${id}&database=${db}&measurement=cpu&action=read`);
    for (const n of [nodes.reader!, nodes.compactorB!]) {
      await until('the role to narrow the token', async () => (await check(n, 'db1')).body.allowed === false && (await check(n, 'db2')).body.allowed === true);
    }
    const query = (n: TestServer, tok: string) => n.fetch('/api/v1/query', { method: 'POST', token: tok, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: 'SELECT count(*) FROM db1.cpu' }) });
    expect((await query(nodes.reader!, token)).status).toBe(403);
    // A token rewritten by another node (rotate) keeps its memberships on the others.
    const fresh = (await post(nodes.compactorA!, `/api/v1/auth/tokens/${id}/rotate`)).token;
    await until('the rotated token on the reader', async () => (await nodes.reader!.fetch('/api/v1/auth/verify', { token: fresh })).status === 200);
    expect((await get(nodes.reader!, `/api/v1/rbac/tokens/${id}/effective`)).body.teams).toHaveLength(1);
    expect((await query(nodes.reader!, fresh)).status).toBe(403);
    // Deleting the organization on one node removes its team, roles and the membership everywhere.
    expect((await nodes.reader!.fetch(`/api/v1/rbac/organizations/${org.id}`, { method: 'DELETE' })).status).toBe(200);
    for (const n of [nodes.writer!, nodes.compactorB!]) {
      await until('the membership gone', async () => (await get(n, `/api/v1/rbac/tokens/${id}/effective`)).body.teams.length === 0);
      expect((await get(n, `/api/v1/rbac/roles/${role.id}`)).status).toBe(404);
    }
    expect((await check(nodes.writer!, 'db1')).body.allowed).toBe(true);
  });

  test('compaction triggered on both compactors at once: the active one merges each partition once, every row exactly once', async () => {
    const h0 = Date.UTC(2024, 2, 1);
    for (let f = 0; f < 3; f++) {
      await writeLines(nodes.writer!, 'twice', Array.from({ length: 5 }, (_, i) => `m,host=h${i} v=${f * 5 + i} ${ns(h0 + f * 60_000 + i * 1000)}`));
      await flush(nodes.writer!);
    }
    await until('the reader to see three files', async () => (await count(nodes.reader!, 'SELECT count(*) AS n FROM twice.m')) === 15);
    const [a, b] = await Promise.all([
      nodes.compactorA!.fetch('/api/v1/compaction/trigger', { method: 'POST' }),
      nodes.compactorB!.fetch('/api/v1/compaction/trigger', { method: 'POST' }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    // The passive compactor hands its trigger to the active one.
    expect(b.headers.get('x-svc-forwarded-by')).toBe('compactor-b');
    const ids = [((await a.json()) as { job_id: string }).job_id, ((await b.json()) as { job_id: string }).job_id];
    const jobs = await until('both jobs to finish', async () => {
      const h = await get(nodes.compactorA!, '/api/v1/compaction/history');
      const done = (h.body.jobs ?? h.body.history ?? []).filter((j: { job_id: string }) => ids.includes(j.job_id));
      return done.length === 2 ? (done as { files_in: number; files_out: number; database: string | null }[]) : null;
    }, 30_000);
    // Three input files merged into one, once: the second job found the partition taken or already merged.
    expect(jobs.reduce((n, j) => n + j.files_out, 0)).toBe(1);
    expect(jobs.reduce((n, j) => n + j.files_in, 0)).toBe(3);
    for (const n of [nodes.reader!, nodes.writer!, nodes.compactorB!]) {
      expect(await count(n, 'SELECT count(*) AS n FROM twice.m')).toBe(15);
      expect(await count(n, 'SELECT count(DISTINCT v) AS n FROM twice.m')).toBe(15);
    }
  }, 60_000);

  // How long the takeover takes (the lease TTL, failover_timeout) is bench/cluster.bench.ts's replication line.
  test('kill -9 of the active compactor: the other takes over once the lease expires; the dead node is listed, then removed', async () => {
    await nodes.compactorA!.kill();
    await until('compactor-b to lead', async () => (await get(nodes.compactorB!, '/api/v1/cluster/local')).body.is_leader === true, 60_000);
    const view = await until('compactor-a dead', async () => {
      const r = await get(nodes.reader!, '/api/v1/cluster');
      return r.body.compactor === 'compactor-b' && r.body.nodes.by_state.dead === 1 ? r : null;
    });
    expect(view.body.nodes.total).toBe(4);
    const dead = await get(nodes.reader!, '/api/v1/cluster/nodes?state=dead');
    expect(dead.body.nodes.map((n: { id: string }) => n.id)).toEqual(['compactor-a']);
    // A live node is protected; a dead one is removed.
    const live = await nodes.reader!.fetch('/api/v1/cluster/nodes/writer-1', { method: 'DELETE' });
    expect(live.status).toBe(409);
    const removed = await nodes.reader!.fetch('/api/v1/cluster/nodes/compactor-a', { method: 'DELETE' });
    expect(removed.status).toBe(200);
    expect(await removed.json()).toEqual({ message: 'cluster node compactor-a removed', id: 'compactor-a' });
    expect((await get(nodes.reader!, '/api/v1/cluster')).body.nodes.total).toBe(3);
    delete nodes.compactorA;
  }, 30_000);

  test('a graceful stop leaves at once: the record goes and no lease expiry is awaited', async () => {
    expect(await nodes.compactorB!.stop()).toBe(0);
    // Gone from etcd by the time the process has exited: it left, rather than waiting for its lease (3 s) to lapse.
    const client = await connectEtcd(etcd.endpoints, 5000);
    const keys = async (kind: string) => (await client.getPrefix(`/svc/v1/itest/${kind}/`)).kvs.map((kv) => kv.key.slice(`/svc/v1/itest/${kind}/`.length)).sort();
    expect({ nodes: await keys('nodes'), alive: await keys('alive') }).toEqual({ nodes: ['reader-1', 'writer-1'], alive: ['reader-1', 'writer-1'] });
    const view = await until('compactor-b gone', async () => {
      const r = await get(nodes.reader!, '/api/v1/cluster');
      return r.body.nodes.total === 2 ? r : null;
    });
    expect(view.body.compactor).toBeNull();
    delete nodes.compactorB;
  });

  test('the etcd leader killed: nodes keep heartbeating through the other members', async () => {
    const leader = await etcd.leader();
    await etcd.kill(leader);
    const before = Date.parse((await get(nodes.writer!, '/api/v1/cluster/local')).body.last_heartbeat);
    await until('a heartbeat after the leader died', async () => Date.parse((await get(nodes.writer!, '/api/v1/cluster/local')).body.last_heartbeat) > before + 500);
    const r = await until('a healthy view without the old leader', async () => {
      const v = await get(nodes.reader!, '/api/v1/cluster');
      return v.body.etcd.healthy && v.body.nodes.by_state.healthy === 2 ? v : null;
    });
    expect(r.body.writer).toBe('writer-1');
    await etcd.start(leader);
  }, 60_000);

  test("etcd's history compacted past a node's watch: the node reloads its metadata and replication goes on", async () => {
    const client = await connectEtcd(etcd.endpoints, 5000);
    const revision = await client.put('/svc/v1/itest/compaction-probe', 'x');
    await client.compact(revision);
    // Every member restarts in turn, so every watch stream breaks and resumes from a revision now compacted away.
    for (const m of etcd.members.map((x) => x.name)) {
      await etcd.kill(m);
      await Bun.sleep(300);
      await etcd.start(m);
    }
    await until('the reader to reload its metadata', async () => /loading the metadata again/.test(nodes.reader!.output()), 20_000);
    const created = await nodes.writer!.fetch('/api/v1/auth/tokens', { method: 'POST', body: JSON.stringify({ name: 'after-compaction', permissions: ['read'] }), headers: { 'content-type': 'application/json' } });
    expect(created.status).toBe(201);
    const { token } = (await created.json()) as { token: string };
    await until('the new token to work on the reader', async () => (await nodes.reader!.fetch('/api/v1/auth/verify', { token })).status === 200, 5000).catch((err: Error) => {
      // The reader's metadata log lines say where the reload stopped.
      const lines = nodes.reader!.output().split('\n').filter((l) => /metadata/.test(l));
      throw new Error(`${err.message}; reader log:\n${lines.slice(-15).join('\n')}`);
    });
  }, 90_000);

  test('startup errors: local storage with clustering, and etcd that cannot be reached, exit 2 with one line', async () => {
    const local = await startServer({ env: { SVC_CLUSTER_ENABLED: 'true', SVC_CLUSTER_ETCD_ENDPOINTS: etcd.endpoints[0]! }, waitReady: false }).catch((e: Error) => e);
    expect(local).toBeInstanceOf(Error);
    expect((local as Error).message).toContain('exit 2');
    expect((local as Error).message).toContain('cluster.enabled needs shared object storage');
    const unreachable = await startServer({ env: { ...envFor('lost', 'reader'), SVC_CLUSTER_ETCD_ENDPOINTS: 'http://127.0.0.1:1' }, waitReady: false }).catch((e: Error) => e);
    expect(unreachable).toBeInstanceOf(Error);
    expect((unreachable as Error).message).toContain('exit 2');
    expect((unreachable as Error).message).toContain('cannot reach etcd at http://127.0.0.1:1');
  }, 40_000);
});

describe('cluster routes on a standalone server', () => {
  test('answer 404 saying clustering is off', async () => {
    const s = await startServer();
    try {
      const res = await s.fetch('/api/v1/cluster');
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: string }).error).toContain('cluster.enabled = false');
      for (const path of ['/api/v1/cluster/local', '/api/v1/cluster/nodes', '/api/v1/cluster/nodes/writer-1']) {
        const other = await s.fetch(path);
        expect({ path, status: other.status, error: ((await other.json()) as { error: string }).error }).toEqual({ path, status: 404, error: expect.stringContaining('cluster.enabled = false') });
      }
    } finally {
      await s.cleanup();
    }
  }, 30_000);
});

/**
 * The etcd client over the JSON gateway against a real three-member etcd cluster: KV and
 * transactions, leases, watches that survive a member's death, elections with fencing, and what a
 * caller sees when quorum is lost.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Candidacy, EtcdClient, EtcdError, LeaseKeeper, readLeader, watch, type WatchEvent } from '../src/cluster/index.ts';
import { etcdAvailable, startEtcd, type TestEtcd } from './helpers/etcd.ts';

const hasEtcd = etcdAvailable();

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

describe.skipIf(!hasEtcd)('etcd client (three real members)', () => {
  let etcd: TestEtcd;
  let client: EtcdClient;

  beforeAll(async () => {
    etcd = await startEtcd(3);
    client = new EtcdClient({ endpoints: etcd.endpoints, requestTimeoutMs: 3000 });
  }, 60_000);
  afterAll(async () => etcd?.stop());

  test('put, get, prefix range, delete; values round-trip as UTF-8', async () => {
    const rev = await client.put('/t/kv/a', 'α-1');
    await client.put('/t/kv/b', '2');
    await client.put('/t/kvx', 'outside the prefix');
    expect(rev).toBeGreaterThan(0);
    expect((await client.get('/t/kv/a'))?.value).toBe('α-1');
    expect(await client.get('/t/kv/none')).toBeNull();
    const { kvs, revision } = await client.getPrefix('/t/kv/');
    expect(kvs.map((k) => [k.key, k.value])).toEqual([['/t/kv/a', 'α-1'], ['/t/kv/b', '2']]);
    expect(revision).toBeGreaterThanOrEqual(rev);
    const page = await client.getPrefix('/t/kv/', { limit: 1 });
    expect(page.kvs.map((k) => k.key)).toEqual(['/t/kv/a']);
    expect(page.more).toBe(true);
    expect((await client.getPrefix('/t/kv/', { startAfter: '/t/kv/a' })).kvs.map((k) => k.key)).toEqual(['/t/kv/b']);
    expect(await client.delete('/t/kv/', { prefix: true })).toBe(2);
    expect((await client.get('/t/kvx'))?.value).toBe('outside the prefix');
  });

  test('a transaction runs one branch atomically and reports which', async () => {
    const create = () => client.txn([{ key: '/t/txn', target: 'CREATE', result: 'EQUAL', revision: 0 }], [{ put: { key: '/t/txn', value: 'first' } }], [{ get: { key: '/t/txn' } }]);
    const first = await create();
    expect(first.succeeded).toBe(true);
    const second = await create();
    expect(second.succeeded).toBe(false);
    expect(second.reads[0]![0]!.value).toBe('first');
    const guarded = await client.txn([{ key: '/t/txn', target: 'VALUE', result: 'EQUAL', value: 'first' }], [{ put: { key: '/t/txn', value: 'second' } }]);
    expect(guarded.succeeded).toBe(true);
    expect((await client.get('/t/txn'))?.value).toBe('second');
  });

  test('a lease kept alive holds its key past its TTL; a lapsed one takes the key with it', async () => {
    let lost = '';
    const keeper = await LeaseKeeper.start(client, { ttlSec: 1, onLost: (r) => (lost = r) });
    await client.put('/t/lease/kept', 'x', keeper.id);
    const bare = await client.leaseGrant(1);
    await client.put('/t/lease/bare', 'y', bare);
    await until('the unrenewed key to expire', async () => (await client.get('/t/lease/bare')) === null);
    expect((await client.get('/t/lease/kept'))?.value).toBe('x');
    expect(lost).toBe('');
    await keeper.stop({ revoke: true });
    expect(await client.get('/t/lease/kept')).toBeNull();
  });

  test('a watch delivers every event in order while the member it reads from is killed', async () => {
    const start = await client.put('/t/w/start', '0');
    const seen: WatchEvent[] = [];
    const w = watch(client, '/t/w/', { prefix: true, fromRevision: start + 1 }, { onEvents: (events) => void seen.push(...events) });
    for (let i = 0; i < 20; i++) await client.put(`/t/w/k${String(i).padStart(2, '0')}`, String(i));
    await until('the first 20 events', () => seen.length >= 20);
    // The watch and the client start at the first endpoint; kill that member mid-stream.
    await etcd.kill('m0');
    for (let i = 20; i < 40; i++) await client.put(`/t/w/k${String(i).padStart(2, '0')}`, String(i));
    await client.delete('/t/w/k00');
    await until('all 41 events after the member died', () => seen.length >= 41, 20_000);
    w.close();
    expect(seen.slice(0, 40).map((e) => Number(e.kv.value))).toEqual([...Array(40).keys()]);
    expect(seen[40]!.type).toBe('DELETE');
    expect(seen.length).toBe(41);
    await etcd.start('m0');
  }, 60_000);

  test('one candidate leads at a time; a lost lease hands over, and the old leader is fenced', async () => {
    const ka = await LeaseKeeper.start(client, { ttlSec: 2, onLost: () => undefined });
    const kb = await LeaseKeeper.start(client, { ttlSec: 2, onLost: () => undefined });
    const a = await Candidacy.enter(client, '/t/elect', ka.id, 'node-a');
    // b reads the candidates through a client that counts its reads, so the test sees b look again.
    let looks = 0;
    const bClient = Object.create(client) as EtcdClient;
    bClient.getPrefix = (...args) => ((looks += 1), client.getPrefix(...args));
    const b = await Candidacy.enter(bClient, '/t/elect', kb.id, 'node-b');
    await a.won();
    expect((await readLeader(client, '/t/elect'))?.value).toBe('node-a');
    let bWon = false;
    const waiting = b.won(undefined, 100).then(() => (bWon = true));
    // b had its chances: it read the candidates three times (first look and two rechecks), a there each time.
    await until('b to read the candidates three times (or to win)', () => looks >= 3 || bWon);
    expect(bWon).toBe(false);
    // a stops renewing (a pause, a crash): its lease lapses and b takes over by itself.
    await ka.stop();
    await waiting;
    expect(await b.isLeader()).toBe(true);
    expect(await a.isLeader()).toBe(false);
    // A write fenced on a's leadership no longer applies.
    const stale = await client.txn([a.fence()], [{ put: { key: '/t/fenced', value: 'from a' } }]);
    expect(stale.succeeded).toBe(false);
    const fresh = await client.txn([b.fence()], [{ put: { key: '/t/fenced', value: 'from b' } }]);
    expect(fresh.succeeded).toBe(true);
    await b.resign();
    expect(await readLeader(client, '/t/elect')).toBeNull();
    await kb.stop({ revoke: true });
  }, 30_000);

  test("a node's own older candidacy (a lease it lost track of, still alive in etcd) is deleted, not waited for", async () => {
    const old = await LeaseKeeper.start(client, { ttlSec: 60, onLost: () => undefined });
    const fresh = await LeaseKeeper.start(client, { ttlSec: 60, onLost: () => undefined });
    const stale = await Candidacy.enter(client, '/t/own', old.id, 'node-a');
    await stale.won();
    const again = await Candidacy.enter(client, '/t/own', fresh.id, 'node-a');
    // Waiting behind the old key would take its 60 s lease (beyond this test's timeout).
    expect(await again.won()).toBe(false);
    expect(await again.isLeader()).toBe(true);
    expect((await client.txn([stale.fence()], [{ put: { key: '/t/own-fenced', value: 'x' } }])).succeeded).toBe(false);
    expect((await client.getPrefix('/t/own/')).kvs.map((kv) => kv.key)).toEqual([again.key]);
    await again.resign();
    await Promise.all([old.stop({ revoke: true }), fresh.stop({ revoke: true })]);
  }, 20_000);

  test('killing the etcd leader: requests go on through the other members', async () => {
    const leader = await etcd.leader();
    await etcd.kill(leader);
    const rev = await client.put('/t/after-leader', 'ok');
    expect(rev).toBeGreaterThan(0);
    expect((await client.get('/t/after-leader'))?.value).toBe('ok');
    await etcd.start(leader);
  }, 30_000);

  test('with quorum lost a write fails with an error instead of hanging', async () => {
    const survivors = etcd.members.map((m) => m.name);
    await etcd.kill(survivors[1]!);
    await etcd.kill(survivors[2]!);
    const lonely = new EtcdClient({ endpoints: [etcd.members[0]!.clientUrl], requestTimeoutMs: 2000 });
    const err = await lonely.put('/t/no-quorum', 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EtcdError);
    await etcd.start(survivors[1]!);
    await etcd.start(survivors[2]!);
    await until('quorum again', async () => (await client.put('/t/quorum-back', 'x').then(() => true, () => false)), 20_000);
  }, 60_000);

  test('no endpoint reachable: an error that names the endpoints', async () => {
    const none = new EtcdClient({ endpoints: ['http://127.0.0.1:1'], requestTimeoutMs: 500 });
    const err = (await none.get('/x').catch((e: unknown) => e)) as EtcdError;
    expect(err).toBeInstanceOf(EtcdError);
    expect(err.unreachable).toBe(true);
    expect(err.message).toContain('127.0.0.1:1');
  });
});

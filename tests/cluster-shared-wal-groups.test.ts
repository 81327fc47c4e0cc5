/**
 * The shared WAL's group commit against a real etcd and s3rver: a group waits for the writers the
 * last commit released (so steady writers share one PUT and one transaction instead of splitting into
 * cohorts), a writer that went away delays the next group by at most wal_group_commit, every committed
 * entry is registered and replayed, and a fenced registration refuses the whole group.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdClient, type Compare } from '../src/cluster/etcd/etcd-client.ts';
import { SharedWal } from '../src/cluster/index.ts';
import { ReadCache } from '../src/storage/cache/read-cache.ts';
import { RemoteObjectStore } from '../src/storage/cache/remote-object-store.ts';
import { S3Backend } from '../src/storage/s3/s3-backend.ts';
import { sampleBatch } from '../src/wal/test-batches.ts';
import { startEtcd } from './helpers/etcd.ts';
import { S3RVER_KEY, startS3rver } from './helpers/s3rver.ts';

const tmp = mkdtempSync(join(tmpdir(), 'svc-shared-wal-'));
const [etcd, s3] = await Promise.all([startEtcd(1), startS3rver(['wal'])]);
afterAll(async () => {
  await Promise.all([etcd.stop(), s3.close()]);
  rmSync(tmp, { recursive: true, force: true });
});

const silent = { info() {}, warn() {}, error() {} };
const holds: Compare = { key: '/t/no-other-primary', target: 'CREATE', result: 'EQUAL', revision: 0 };

async function open(prefix: string, groupCommitMs: number, fence: () => Compare = () => holds) {
  const client = new EtcdClient({ endpoints: etcd.endpoints });
  const store = new RemoteObjectStore(new S3Backend({ bucket: 'wal', region: 'us-east-1', endpoint: s3.endpoint, pathStyle: true, ...S3RVER_KEY }), await new ReadCache({ dir: join(tmp, prefix), maxBytes: 1 << 26 }).open(), { prefix: '' });
  const groups: number[] = [];
  const fenced: string[] = [];
  const wal = new SharedWal({ client, store, prefix: `/t/${prefix}`, clusterName: prefix, nodeId: 'w', groupCommitMs, fence, onFenced: (r) => fenced.push(r), onCommit: (c) => groups.push(c.entries), log: silent });
  return { wal, groups, fenced };
}

describe('shared WAL group commit (etcd, s3rver)', () => {
  // wal_group_commit bounds the wait: long (10 s) where writers must be waited for whatever the machine's
  // load, short where the wait must end; how much a group saves is bench/cluster.bench.ts's shared WAL line.
  test('a group waits for the writers the last commit released; a writer gone delays it only until wal_group_commit; every entry is replayed', async () => {
    const { wal, groups } = await open('groups', 10_000);
    const write = (i: number) => wal.append(`db${i}`, sampleBatch(10, i * 10));
    // Four writers at once: one group.
    await Promise.all([0, 1, 2, 3].map(write));
    // They come back one by one: the first waits for the other three instead of committing alone.
    const first = write(4);
    await Bun.sleep(150);
    await Promise.all([first, write(5), write(6), write(7)]);
    expect(groups).toEqual([4, 4]);
    const replayed: string[] = [];
    const n = await wal.replay((database, batches) => replayed.push(`${database}:${batches[0]!.length}`));
    expect(n).toBe(8);
    expect(replayed).toEqual(Array.from({ length: 8 }, (_, i) => `db${i}:10`));
    wal.close();

    // Three writers went away: the one left is committed once the wait ends, then alone at once.
    const gone = await open('gone', 200);
    await Promise.all([0, 1, 2, 3].map((i) => gone.wal.append('db', sampleBatch(5, i * 5))));
    await gone.wal.append('db', sampleBatch(5, 20));
    await gone.wal.append('db', sampleBatch(5, 25));
    expect(gone.groups).toEqual([4, 1, 1]);
    expect(await gone.wal.replay(() => {})).toBe(6);
    gone.wal.close();
  }, 60_000);

  test('a fenced registration refuses every write of the group and tells the node to step down', async () => {
    const taken: Compare = { key: '/t/fenced/elected', target: 'CREATE', result: 'EQUAL', revision: 0 };
    await new EtcdClient({ endpoints: etcd.endpoints }).put('/t/fenced/elected', 'another node');
    const { wal, groups, fenced } = await open('fenced', 100, () => taken);
    const results = await Promise.allSettled([0, 1].map((i) => wal.append('db', sampleBatch(5, i * 5))));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason.message)).toMatch(/no longer the primary writer/);
    expect(fenced.length).toBe(1);
    expect(groups).toEqual([]);
    expect(await wal.replay(() => {})).toBe(0);
    wal.close();
  });
});

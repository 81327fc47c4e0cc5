/**
 * A flush too large for one etcd transaction stays exactly once across a crash part way: real etcd,
 * s3rver and two svc writers per case. The primary acknowledges one write spanning 150 hours, then
 * flushes it (150 hour-files: an intent, then two registering transactions) and is killed (-9, by a
 * failpoint) right after the intent is recorded, or right after the first registering transaction.
 * The standby takes over; every hour holds its rows exactly once on it, before and after its own
 * flush, and no intent is left in etcd. Against etcd alone: a backfill of 3,000 wide hour-files fits
 * etcd's limits, a deposed node records nothing, and an intent completed by two nodes at once
 * registers each file once.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileManifestStore, migrations, openCatalog, type ManifestFile } from '../src/catalog/index.ts';
import { EtcdClient, type Compare } from '../src/cluster/etcd/etcd-client.ts';
import { intentWrites, planIntent } from '../src/cluster/flush-intent.ts';
import { SharedManifest } from '../src/cluster/index.ts';
import { clusterNodeEnv, etcdAvailable, startEtcd, type TestEtcd } from './helpers/etcd.ts';
import { flush, HOUR_MS, ns, query, writeLines } from './helpers/lifecycle.ts';
import { startS3rver, type TestS3 } from './helpers/s3rver.ts';
import { startServer, type TestServer } from './helpers/server.ts';
import { waitFor as until } from './helpers/until.ts';

const hasEtcd = etcdAvailable();
const H0 = Date.UTC(2024, 6, 1);
const HOURS = 150;
const ROWS_PER_HOUR = 3;

describe.skipIf(!hasEtcd)('a flush of more than one etcd transaction, killed part way (etcd, s3rver, two writers)', () => {
  let etcd: TestEtcd;
  let s3: TestS3;
  const nodes: TestServer[] = [];

  beforeAll(async () => {
    [etcd, s3] = await Promise.all([startEtcd(1), startS3rver(['intent'])]);
  }, 60_000);

  afterAll(async () => {
    if (process.env.SVC_TEST_DUMP_DIR) for (const [i, n] of nodes.entries()) await Bun.write(`${process.env.SVC_TEST_DUMP_DIR}/intent-node-${i}.log`, n.output());
    await Promise.all(nodes.map((n) => n.cleanup()));
    await Promise.all([etcd?.stop(), s3?.close()]);
  });

  const writerOf = async (n: TestServer) => ((await (await n.fetch('/api/v1/cluster')).json()) as { writer: string | null }).writer;
  /** Rows per hour index as `n` sees them. */
  const perHour = async (n: TestServer) => {
    const rows = await query(n, `SELECT CAST(floor(epoch_ms(time) / ${HOUR_MS}) AS BIGINT) AS h, count(*) AS n FROM intent.m GROUP BY h`);
    return new Map(rows.map((r) => [Number(r.h) - H0 / HOUR_MS, Number(r.n)]));
  };
  const expectExactlyOnce = (seen: Map<number, number>) => {
    expect([...seen].filter(([h, n]) => n !== ROWS_PER_HOUR || h < 0 || h >= HOURS)).toEqual([]);
    expect(seen.size).toBe(HOURS);
  };

  /** One cluster whose primary dies at `failpoint` in its flush; `partsLeft` is what the standby finds to complete. */
  const crashAndTakeOver = async (failpoint: string, partsLeft: number) => {
    const name = `intent-${failpoint.split(/[.:]/)[1]}`;
    const envFor = (id: string, extra: Record<string, string> = {}) => ({
      ...s3.env('intent', name),
      ...clusterNodeEnv(etcd, name, id, 'writer'),
      SVC_CLUSTER_FAILOVER_TIMEOUT: '2s',
      SVC_CLUSTER_SHARED_SECRET: 'intent-secret',
      SVC_CLUSTER_MANIFEST_SNAPSHOT_INTERVAL: '0',
      SVC_INGEST_MAX_BUFFER_AGE_MS: '600000',
      ...extra,
    });
    const a = await startServer({ env: envFor('writer-a', { SVC_FAILPOINT: failpoint }) });
    nodes.push(a);
    await until('writer-a to be primary', async () => (await writerOf(a)) === 'writer-a');
    const b = await startServer({ env: envFor('writer-b') });
    nodes.push(b);

    const lines: string[] = [];
    for (let h = 0; h < HOURS; h++) for (let i = 0; i < ROWS_PER_HOUR; i++) lines.push(`m,hour=h${h} v=${i}i ${ns(H0 + h * HOUR_MS + i * 1000)}`);
    await writeLines(a, 'intent', lines);
    // The flush dies with its node at the failpoint.
    await a.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' }).catch(() => null);
    await a.proc.exited;
    expect(a.proc.signalCode).toBe('SIGKILL');

    // Leading: its take-over (completing the intent, then the replay) is done.
    await until('writer-b to take over', async () => ((await (await b.fetch('/api/v1/cluster/local')).json()) as { is_leader: boolean }).is_leader, 30_000);
    expectExactlyOnce(await perHour(b));
    expect(b.output()).toContain(`parts_left=${partsLeft}`);
    await flush(b);
    expectExactlyOnce(await perHour(b));
    const client = new EtcdClient({ endpoints: etcd.endpoints });
    expect((await client.getPrefix(`/svc/v1/${name}/manifest/intents/`)).kvs).toEqual([]);
  };

  // Two clusters at once (the run is mostly waiting: process starts, the failover timeout).
  test('killed right after the intent, or after the first registering transaction: the standby completes the flush and replays nothing twice', async () => {
    await Promise.all([crashAndTakeOver('manifest.after_intent:1', 2), crashAndTakeOver('manifest.after_chunk:1', 1)]);
  }, 60_000);

  test('a backfill of 3,000 wide hour-files commits within etcd limits; a deposed node records nothing; a double completion registers each file once', async () => {
    const client = new EtcdClient({ endpoints: etcd.endpoints });
    const prefix = '/svc-test/intents';
    const dir = mkdtempSync(join(tmpdir(), 'svc-intents-'));
    const quiet = { info: () => {}, warn: () => {}, error: () => {} };
    // Fences as the election gives them: each holds while its "deposed" key is absent.
    const fenceOf = (name: string): Compare => ({ key: `${prefix}/deposed-${name}`, target: 'CREATE', result: 'EQUAL', revision: 0 });
    const node = (name: string) => {
      const local = new FileManifestStore(openCatalog(join(dir, `${name}.db`), migrations));
      const shared = new SharedManifest(client, prefix, local, quiet, () => fenceOf(name));
      shared.coverage = (covers) => covers.map((c) => ({ key: `${prefix}/wal/covered/${String(c)}`, value: '{}' }));
      local.setJournal(shared);
      return { local, shared };
    };
    const hourFile = (i: number, seq: number): ManifestFile => ({
      path: `b/m/${seq}/${String(i).padStart(5, '0')}.parquet`, database: 'b', measurement: 'm', hour: i * 3_600_000_000, minTime: i * 3_600_000_000,
      maxTime: i * 3_600_000_000 + 1, rows: 1, bytes: 100, columns: Array.from({ length: 60 }, (_, c) => `sensor_reading_${c}`), seq, createdAt: new Date().toISOString(),
    });
    const files = async () => (await client.getPrefixPaged(`${prefix}/manifest/files/`)).kvs;
    const intents = async () => (await client.getPrefix(`${prefix}/manifest/intents/`)).kvs;
    const [w, s1, s2] = [node('w'), node('s1'), node('s2')];
    try {
      await Promise.all([w.shared.start(), s1.shared.start(), s2.shared.start()]);
      const backfill = Array.from({ length: 3000 }, (_, i) => hourFile(i, 1));
      await w.local.commit([], backfill, ['backfill']);
      expect((await files()).length).toBe(3000);
      expect(await intents()).toEqual([]);
      expect(await client.get(`${prefix}/wal/covered/backfill`)).not.toBeNull();
      await until('another node to apply every file', async () => s1.local.listAll('b').length === 3000);

      await client.put(`${prefix}/deposed-w`, 'another primary');
      await expect(w.local.commit([], Array.from({ length: 150 }, (_, i) => hourFile(i, 2)), ['deposed'])).rejects.toThrow(/no longer holds its role/);
      expect(await intents()).toEqual([]);
      expect((await files()).length).toBe(3000);
      expect(await client.get(`${prefix}/wal/covered/deposed`)).toBeNull();

      // A node recorded this flush and died before registering any of it; two nodes complete it at once.
      const intent = planIntent(prefix, [], Array.from({ length: 250 }, (_, i) => hourFile(i, 3)), [{ key: `${prefix}/wal/covered/crashed`, value: '{}' }]);
      for (const ops of intentWrites(intent)) expect((await client.txn([], ops)).succeeded).toBe(true);
      const done = await Promise.all([s1.shared.completeIntents(), s2.shared.completeIntents()]);
      expect(done).toEqual([1, 1]);
      const kvs = await files();
      expect(kvs.length).toBe(3250);
      expect(kvs.filter((kv) => kv.key.includes('/b/m/3/') && Number(kv.version) !== 1)).toEqual([]);
      expect(await client.get(`${prefix}/wal/covered/crashed`)).not.toBeNull();
      expect(await intents()).toEqual([]);
      expect(await s1.shared.completeIntents()).toBe(0);
    } finally {
      for (const n of [w, s1, s2]) n.shared.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

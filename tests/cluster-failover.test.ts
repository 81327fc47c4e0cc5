/**
 * Writer failover end to end: a real three-member etcd, s3rver, two writers (one primary, one
 * standby) and one reader, each its own process. A bounded client loop writes tagged batches through
 * the reader and records which were acknowledged, while the primary is killed (-9) three times (and
 * restarted as a standby each time), then paused (SIGSTOP) for 20 s and resumed. Afterwards every
 * acknowledged batch is stored exactly once, no stored batch is partial or doubled, the longest gap
 * between two acknowledgements stays within 10 s (failover_timeout 5 s), and the resumed ex-primary
 * names the new primary. A SIGTERM on the primary hands over without the client seeing an error.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterNodeEnv, etcdAvailable, startEtcd, type TestEtcd } from './helpers/etcd.ts';
import { ns, query } from './helpers/lifecycle.ts';
import { startS3rver, type TestS3 } from './helpers/s3rver.ts';
import { startServer, type TestServer } from './helpers/server.ts';
import { waitFor as until } from './helpers/until.ts';

const hasEtcd = etcdAvailable();
const T0 = Date.UTC(2024, 2, 1);
const ROWS = 20;

/** Writes batches through `via` until stopped (bounded: at most `max` batches), recording what was acknowledged. */
class ClientLoop {
  readonly acked = new Set<number>();
  readonly errors: string[] = [];
  longestGapMs = 0;
  private lastAck = 0;
  private next: number;
  private stopped = false;
  private runs: Promise<void>[] = [];

  constructor(
    private readonly via: () => TestServer,
    private readonly first: number,
    private readonly max: number,
  ) {
    this.next = first;
  }

  start(loops = 2): void {
    this.lastAck = Date.now();
    for (let i = 0; i < loops; i++) this.runs.push(this.run());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.runs);
    this.runs = [];
    this.stopped = false;
  }

  private async run(): Promise<void> {
    while (!this.stopped && this.next < this.first + this.max) {
      const id = this.next++;
      const lines = Array.from({ length: ROWS }, (_, i) => `chaos,batch=b${id} v=${i}i ${ns(T0 + id * 100 + i)}`);
      try {
        const res = await this.via().fetch('/api/v1/write/line-protocol', {
          method: 'POST',
          headers: { 'x-svc-database': 'chaos', 'content-type': 'text/plain' },
          body: lines.join('\n'),
          signal: AbortSignal.timeout(8000),
        });
        const text = await res.text();
        if (res.status === 204) {
          const now = Date.now();
          this.longestGapMs = Math.max(this.longestGapMs, now - this.lastAck);
          this.lastAck = now;
          this.acked.add(id);
          continue;
        }
        this.errors.push(`${res.status} ${text.slice(0, 200)}`);
      } catch (err) {
        this.errors.push((err as Error).message);
      }
      await Bun.sleep(100);
    }
  }
}

describe.skipIf(!hasEtcd)('writer failover (etcd x3, s3rver, two writers, one reader)', () => {
  let etcd: TestEtcd;
  let s3: TestS3;
  let reader: TestServer;
  const writers: Record<string, TestServer> = {};
  const dirs: Record<string, string> = {};
  const envFor = (id: string, role: string) => ({
    ...s3.env('failover'),
    ...clusterNodeEnv(etcd, 'failover', id, role),
    SVC_CLUSTER_FAILOVER_TIMEOUT: '5s',
    SVC_CLUSTER_SHARED_SECRET: 'failover-secret',
    SVC_CLUSTER_MANIFEST_SNAPSHOT_INTERVAL: '0',
    // Flushes run during the loop, so the new primary must skip what they cover.
    SVC_INGEST_MAX_BUFFER_AGE_MS: '1000',
  });
  const startWriter = async (id: string) => {
    dirs[id] ??= mkdtempSync(join(tmpdir(), `svc-failover-${id}-`));
    writers[id] = await startServer({ env: envFor(id, 'writer'), dir: dirs[id] });
    return writers[id]!;
  };
  const cluster = async (n: TestServer) => (await (await n.fetch('/api/v1/cluster')).json()) as { writer: string | null };
  const primary = () => until('a primary writer', async () => (await cluster(reader)).writer);
  const metric = async (n: TestServer, name: string) => {
    const text = await (await n.fetch('/metrics')).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
    return line ? Number(line.split(' ').pop()) : NaN;
  };

  beforeAll(async () => {
    [etcd, s3] = await Promise.all([startEtcd(3), startS3rver(['failover'])]);
    await startWriter('writer-a');
    reader = await startServer({ env: envFor('reader-1', 'reader') });
    await until('writer-a to be primary', async () => (await cluster(reader)).writer === 'writer-a');
    await startWriter('writer-b');
  }, 120_000);

  afterAll(async () => {
    for (const w of Object.values(writers)) {
      w.proc.kill('SIGCONT');
      await w.kill();
    }
    await reader?.kill();
    await Promise.all([etcd?.stop(), s3?.close()]);
    for (const d of Object.values(dirs)) rmSync(d, { recursive: true, force: true });
  });

  /** Every stored batch with its row count, as the reader sees it once the primary flushed. */
  const stored = async () => {
    const res = await reader.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
    expect(res.status).toBeLessThan(300);
    const rows = await query(reader, 'SELECT batch, count(*) AS n FROM chaos.chaos GROUP BY batch');
    return new Map(rows.map((r) => [Number(String(r.batch).slice(1)), Number(r.n)]));
  };

  const checkExactlyOnce = async (loop: ClientLoop) => {
    const seen = await until('every acknowledged batch queryable on the reader', async () => {
      const s = await stored();
      return [...loop.acked].every((id) => s.has(id)) ? s : null;
    }, 30_000);
    const wrong = [...seen].filter(([, n]) => n !== ROWS);
    expect(wrong).toEqual([]);
    for (const id of loop.acked) expect(seen.get(id)).toBe(ROWS);
    return seen;
  };

  test('kill -9 three times, then SIGSTOP 20 s: no acknowledged batch lost or doubled, outage at most 10 s', async () => {
    const loop = new ClientLoop(() => reader, 0, 20_000);
    loop.start();
    await until('writes acknowledged', async () => loop.acked.size > 20);
    for (let round = 0; round < 3; round++) {
      const was = await primary();
      const before = loop.acked.size;
      await writers[was]!.kill();
      const now = await until('a new primary', async () => {
        const w = (await cluster(reader)).writer;
        return w && w !== was ? w : null;
      });
      await until('writes acknowledged by the new primary', async () => loop.acked.size > before + 10);
      expect(await metric(writers[now]!, 'svc_cluster_failovers_total')).toBeGreaterThanOrEqual(1);
      expect(await metric(writers[now]!, 'svc_cluster_is_primary')).toBe(1);
      // Back as a standby, with its own data directory (its old buffers are gone, not replayed by it).
      await startWriter(was);
      expect(await metric(writers[was]!, 'svc_cluster_is_primary')).toBe(0);
    }
    const paused = await primary();
    const before = loop.acked.size;
    writers[paused]!.proc.kill('SIGSTOP');
    await Bun.sleep(20_000);
    writers[paused]!.proc.kill('SIGCONT');
    const successor = (await cluster(reader)).writer;
    expect(successor).not.toBe(paused);
    expect(loop.acked.size).toBeGreaterThan(before);
    // The resumed ex-primary registers nothing more and names its successor.
    await until('the resumed ex-primary to name the new primary', async () => (await cluster(writers[paused]!)).writer === successor);
    await until('the resumed ex-primary to be a standby', async () => ((await (await writers[paused]!.fetch('/api/v1/cluster/local')).json()) as { is_leader: boolean }).is_leader === false);
    await Bun.sleep(2000);
    await loop.stop();
    await checkExactlyOnce(loop);
    expect(loop.longestGapMs).toBeLessThanOrEqual(10_000);
    // Every registered segment ends up covered by registered files, and is collected.
    await until('every shared WAL segment covered and collected', async () => (await metric(writers[successor!]!, 'svc_wal_shared_segments_pending')) === 0);
  }, 240_000);

  test('SIGTERM on the primary hands over without an error seen by the client', async () => {
    const was = await primary();
    const other = Object.keys(writers).find((id) => id !== was)!;
    await until('the standby to be healthy', async () => (await writers[other]!.fetch('/ready')).status === 200);
    const loop = new ClientLoop(() => reader, 100_000, 5000);
    loop.start();
    await until('writes acknowledged', async () => loop.acked.size > 20);
    expect(await writers[was]!.stop()).toBe(0);
    await until('the standby to take over', async () => (await cluster(reader)).writer === other);
    const after = loop.acked.size;
    await until('writes acknowledged by the new primary', async () => loop.acked.size > after + 20);
    await loop.stop();
    expect(loop.errors).toEqual([]);
    await checkExactlyOnce(loop);
  }, 120_000);
});

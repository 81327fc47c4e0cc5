/**
 * Cluster cost benchmark (`bun run bench:cluster`): the same line-protocol ingest and the same
 * queries against a standalone server on s3rver (WAL off, and WAL on) and against a cluster on s3rver
 * (a writer taking the writes through the shared WAL, a reader answering the queries, three etcd
 * members), in one run. Prints ingest lines/s and query latency (median of repeated calls) side by
 * side with the ratio and the difference. Then the failover outage: two writers and a reader, a client
 * writing through the reader, the primary killed (-9) BENCH_KILLS times (restarted as a standby each
 * time); the outage of a kill is the time from the kill to the next acknowledged write.
 * Then replication (BENCH_REPLICATION rounds, default 5; 0 skips): how soon a token made on the writer
 * works on the reader and a file flushed on the writer is queryable there, how soon the other compactor
 * leads after a kill -9 of the active one (failover_timeout 3s), and how soon a graceful leave is seen.
 * The cluster tests check that each happens; these are how fast.
 * Env: BENCH_SECONDS (ingest time per turn, default 4), BENCH_CONCURRENCY (default 4), BENCH_QUERIES
 * (calls per query per turn, default 30), BENCH_ROUNDS (alternating turns, default 3); medians of the
 * turns; BENCH_KILLS (default 10; 0 skips the failover part); BENCH_PROFILE (a directory: the
 * cluster's writer, the failover-off writer and the standalone server with its WAL run with --cpu-prof there; the pids are printed). Needs etcd (Debian etcd-server) on PATH.
 * s3rver and etcd run on the same cores as svc, so the CPU time of every process (svc, s3rver, the
 * etcd members) during the ingest turns is printed per million lines, for both set-ups.
 * A third set-up, a writer with cluster.failover_enabled = false (it acknowledges from its own WAL,
 * BENCH_OFF_WAL = true by default, not the shared WAL), takes its own turns: the cost of clustering
 * itself, against the standalone server with the same durability.
 * BENCH_BASELINE (the root of another checkout, e.g. main's worktree): a second cluster (own bucket and
 * etcd prefix) runs that checkout's code and takes its own ingest turns, for a before/after in one run.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterNodeEnv, startEtcd, type TestEtcd } from '../tests/helpers/etcd.ts';
import { startS3rver } from '../tests/helpers/s3rver.ts';
import { startServer, type TestServer } from '../tests/helpers/server.ts';
import { cpuSeconds } from './proc-stat.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 30);
const LINES = 5000;
/** Alternating turns per side (each turn: BENCH_SECONDS of ingest, BENCH_QUERIES calls per query). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const KILLS = Number(process.env.BENCH_KILLS ?? 10);
const REPLICATION = Number(process.env.BENCH_REPLICATION ?? 5);
const PROFILE = process.env.BENCH_PROFILE;
const BASELINE = process.env.BENCH_BASELINE;
/** wal.enabled of the failover-off cluster's writer (default true: the standalone-with-WAL durability). */
const OFF_WAL = process.env.BENCH_OFF_WAL ?? 'true';


/** CPU seconds per process group spent in ingest turns, and the lines those turns wrote. */
interface CpuUse {
  svc: number;
  /** Of `svc`, the first process's share (the writer in the cluster). */
  first: number;
  s3rver: number;
  etcd: number;
  lines: number;
}

function body(batch: number): string {
  const t0 = Date.UTC(2024, 0, 1) + batch * LINES;
  const out: string[] = [];
  for (let i = 0; i < LINES; i++)
    out.push(`cpu,host=host_${i % 100},region=region_${i % 10} usage_user=${(i % 97) + 0.5},usage_system=${(i % 13) + 0.25},usage_idle=${(i % 7) + 0.125},io_wait=${i % 5},load=${(i % 11) + 0.5} ${(t0 + i) * 1_000_000}`);
  return out.join('\n');
}

/** Runs `turn` and adds the CPU time each process group used meanwhile to `use`. */
async function metered(use: CpuUse, pids: { svc: number[]; s3rver: number; etcd: number[] }, turn: () => Promise<{ rate: number; lines: number }>): Promise<number> {
  const sum = (ps: number[]) => ps.reduce((a, p) => a + cpuSeconds(p), 0);
  const before = { svc: sum(pids.svc), first: cpuSeconds(pids.svc[0]!), s3rver: cpuSeconds(pids.s3rver), etcd: sum(pids.etcd) };
  const { rate, lines } = await turn();
  use.svc += sum(pids.svc) - before.svc;
  use.first += cpuSeconds(pids.svc[0]!) - before.first;
  use.s3rver += cpuSeconds(pids.s3rver) - before.s3rver;
  use.etcd += sum(pids.etcd) - before.etcd;
  use.lines += lines;
  return rate;
}

const WAL_METRICS = ['commits', 'entries', 'bytes', 'put_seconds', 'commit_seconds'] as const;
type WalMetrics = Record<(typeof WAL_METRICS)[number], number>;
/** The writer's shared WAL counters now. */
async function walMetrics(s: TestServer): Promise<WalMetrics> {
  const text = await (await s.fetch('/metrics')).text();
  const read = (k: string) => Number(new RegExp(`^svc_wal_shared_${k}_total(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return Object.fromEntries(WAL_METRICS.map((k) => [k, read(k)])) as WalMetrics;
}

async function ingest(s: TestServer): Promise<{ rate: number; lines: number }> {
  const bodies = Array.from({ length: 16 }, (_, i) => body(i));
  let lines = 0;
  let next = 0;
  const end = Date.now() + SECONDS * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        const b = bodies[next++ % bodies.length]!;
        const r = await s.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'bench' }, body: b });
        if (r.status !== 204) throw new Error(`write answered ${r.status}: ${await r.text()}`);
        lines += LINES;
      }
    }),
  );
  return { rate: lines / ((performance.now() - start) / 1000), lines };
}

async function latency(s: TestServer, sql: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < QUERIES + 5; i++) {
    const t = performance.now();
    const r = await s.fetch('/api/v1/query', { method: 'POST', body: JSON.stringify({ sql }), headers: { 'content-type': 'application/json' } });
    if (r.status !== 200) throw new Error(`query answered ${r.status}: ${await r.text()}`);
    await r.arrayBuffer();
    if (i >= 5) times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const SQL = { 'count(*)': 'SELECT count(*) FROM bench.cpu', 'GROUP BY host': 'SELECT host, avg(usage_user) FROM bench.cpu GROUP BY host' };

const [etcd, s3] = await Promise.all([startEtcd(3), startS3rver(['solo', 'solowal', 'clus', 'clusold', 'clusoff', 'fo', 'rep'])]);
const common = { SVC_MEMORY_ENABLED: 'false', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' };
const results: Record<string, { solo: number; cluster: number; soloWal?: number }> = {};
const offWriterKey = `ingest (lines/s), cluster with failover off (the writer's own WAL ${OFF_WAL === 'true' ? 'on' : 'off'}, no shared WAL)`;
const cpuUse = { soloWal: { svc: 0, first: 0, s3rver: 0, etcd: 0, lines: 0 }, cluster: { svc: 0, first: 0, s3rver: 0, etcd: 0, lines: 0 }, baseline: { svc: 0, first: 0, s3rver: 0, etcd: 0, lines: 0 }, off: { svc: 0, first: 0, s3rver: 0, etcd: 0, lines: 0 } };
let outages: number[] = [];
let replication: Record<string, number[]> = {};
const walUse: WalMetrics = { commits: 0, entries: 0, bytes: 0, put_seconds: 0, commit_seconds: 0 };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  // Both set-ups run side by side and take turns, so drift in the machine's load hits both alike.
  const cl = (id: string, role: string) => ({ ...s3.env('clus'), ...common, SVC_CLUSTER_ENABLED: 'true', SVC_CLUSTER_NODE_ID: id, SVC_CLUSTER_ROLE: role, SVC_CLUSTER_ETCD_ENDPOINTS: etcd.endpoints.join(',') });
  const [solo, soloWal, writer, reader] = await Promise.all([
    startServer({ env: { ...s3.env('solo'), ...common } }),
    startServer({ env: { ...s3.env('solowal'), ...common, SVC_WAL_ENABLED: 'true' }, ...profiled() }),
    startServer({ env: cl('w', 'writer'), ...profiled() }),
    startServer({ env: cl('r', 'reader') }),
  ]);
  const old = BASELINE
    ? await Promise.all(
        (['w', 'r'] as const).map((id) =>
          startServer({ env: { ...cl(`old${id}`, id === 'w' ? 'writer' : 'reader'), ...s3.env('clusold'), SVC_CLUSTER_NAME: 'old' }, executable: process.execPath, args: [join(BASELINE, 'src', 'main.ts')] }),
        ),
      )
    : null;
  // Failover off: the writer acknowledges from its own WAL, so this is the cost of clustering alone.
  const off = await startServer({ env: { ...cl('off', 'writer'), ...s3.env('clusoff'), SVC_CLUSTER_NAME: 'off', SVC_CLUSTER_FAILOVER_ENABLED: 'false', SVC_WAL_ENABLED: OFF_WAL }, ...profiled() });
  if (PROFILE) console.log(`profiles in ${PROFILE}: cluster writer pid ${writer.proc.pid}, failover-off writer pid ${off.proc.pid}, standalone with its WAL pid ${soloWal.proc.pid}`);
  await Bun.sleep(1500); // the writer wins its election
  const baselineRates: number[] = [];
  const soloRates: number[] = [];
  const soloWalRates: number[] = [];
  const clusterRates: number[] = [];
  const offRates: number[] = [];
  const etcdPids = etcd.members.map((m) => m.proc!.pid);
  for (let round = 0; round < ROUNDS; round++) {
    soloRates.push((await ingest(solo)).rate);
    soloWalRates.push(await metered(cpuUse.soloWal, { svc: [soloWal.proc.pid], s3rver: s3.pid, etcd: etcdPids }, () => ingest(soloWal)));
    const w0 = await walMetrics(writer);
    clusterRates.push(await metered(cpuUse.cluster, { svc: [writer.proc.pid, reader.proc.pid], s3rver: s3.pid, etcd: etcdPids }, () => ingest(writer)));
    const w1 = await walMetrics(writer);
    for (const k of WAL_METRICS) walUse[k] += w1[k] - w0[k];
    offRates.push(await metered(cpuUse.off, { svc: [off.proc.pid], s3rver: s3.pid, etcd: etcdPids }, () => ingest(off)));
    if (old) baselineRates.push(await metered(cpuUse.baseline, { svc: old.map((o) => o.proc.pid), s3rver: s3.pid, etcd: etcdPids }, () => ingest(old[0]!)));
  }
  if (old) {
    results['ingest (lines/s), cluster on the baseline code'] = { solo: median(soloRates), soloWal: median(soloWalRates), cluster: median(baselineRates) };
    await Promise.all(old.map((o) => o.cleanup()));
  }
  results[offWriterKey] = { solo: median(soloRates), soloWal: median(soloWalRates), cluster: median(offRates) };
  await off.cleanup();
  for (const s of [solo, soloWal, writer]) await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
  await Bun.sleep(500);
  results['ingest (lines/s)'] = { solo: median(soloRates), soloWal: median(soloWalRates), cluster: median(clusterRates) };
  await soloWal.cleanup();
  for (const [k, q] of Object.entries(SQL)) {
    const soloMs: number[] = [];
    const clusterMs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      soloMs.push(await latency(solo, q));
      clusterMs.push(await latency(reader, q));
    }
    results[`query ${k} (ms, median)`] = { solo: median(soloMs), cluster: median(clusterMs) };
  }
  await Promise.all([solo.cleanup(), writer.cleanup(), reader.cleanup()]);
  if (KILLS > 0) outages = await failoverOutages(etcd.endpoints, s3.env('fo'));
  if (REPLICATION > 0) replication = await replicationTimes(etcd, s3.env('rep'));
} finally {
  await Promise.all([etcd.stop(), s3.close()]);
}

console.log(`\nbench:cluster — ${ROUNDS} alternating turns per side of ${SECONDS}s of ingest, ${CONCURRENCY} connections, ${LINES}-line bodies; ${QUERIES} calls per query\n`);
console.log('| measure | standalone | cluster | ratio | difference |');
console.log('|---|---:|---:|---:|---:|');
for (const [k, v] of Object.entries(results)) {
  const fmt = (x: number) => (k.startsWith('ingest') ? `${(x / 1e6).toFixed(2)}M` : x.toFixed(2));
  console.log(`| ${k} | ${fmt(v.solo)} | ${fmt(v.cluster)} | ${(v.cluster / v.solo).toFixed(3)} | ${k.startsWith('ingest') ? '' : `${(v.cluster - v.solo).toFixed(2)} ms`} |`);
  if (v.soloWal !== undefined) console.log(`| ${k}, standalone with its local WAL on | ${fmt(v.soloWal)} | ${fmt(v.cluster)} | ${(v.cluster / v.soloWal).toFixed(3)} | |`);
}
console.log('\n| CPU seconds per million lines ingested | svc | of which the writer | s3rver | etcd (3 members) | total |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [k, u] of [['standalone with its local WAL on', cpuUse.soloWal], ['cluster (writer and reader)', cpuUse.cluster], ['cluster with failover off (writer)', cpuUse.off], ...(BASELINE ? [['cluster on the baseline code', cpuUse.baseline] as const] : [])] as const) {
  const per = (x: number) => ((x / u.lines) * 1e6).toFixed(2);
  console.log(`| ${k} | ${per(u.svc)} | ${per(u.first)} | ${per(u.s3rver)} | ${per(u.etcd)} | ${per(u.svc + u.s3rver + u.etcd)} |`);
}
if (walUse.commits > 0) {
  const per = (x: number) => x / walUse.commits;
  console.log(`\nshared WAL on the cluster's writer during its turns: ${walUse.commits} commits, ${per(walUse.entries).toFixed(2)} writes per group, ${(per(walUse.bytes) / 1024).toFixed(1)} KiB per segment, PUT ${(per(walUse.put_seconds) * 1000).toFixed(1)} ms, commit (frames, PUT, fenced txn) ${(per(walUse.commit_seconds) * 1000).toFixed(1)} ms`);
}
if (outages.length > 0) {
  const sorted = [...outages].sort((a, b) => a - b);
  console.log(`\nfailover outage over ${outages.length} kills -9 of the primary (failover_timeout 5s): median ${(median(sorted) / 1000).toFixed(2)} s, max ${(sorted[sorted.length - 1]! / 1000).toFixed(2)} s; each: ${sorted.map((x) => (x / 1000).toFixed(2)).join(', ')}`);
}

for (const [k, ms] of Object.entries(replication)) {
  const sorted = [...ms].sort((a, b) => a - b);
  console.log(`${k}: median ${median(sorted).toFixed(0)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms over ${ms.length}`);
}

/** Start options that run a server under --cpu-prof into BENCH_PROFILE, when set. */
function profiled(): { executable?: string; args?: string[] } {
  if (!PROFILE) return {};
  mkdirSync(PROFILE, { recursive: true });
  return { executable: process.execPath, args: ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${PROFILE}`, join(import.meta.dir, '..', 'src', 'main.ts')] };
}

/** Kills the primary writer `KILLS` times under a client writing through the reader; the outage of each kill in ms. */
async function failoverOutages(endpoints: string[], bucket: Record<string, string>): Promise<number[]> {
  const env = (id: string, role: string) => ({
    ...bucket, ...common, SVC_CLUSTER_ENABLED: 'true', SVC_CLUSTER_NAME: 'fo', SVC_CLUSTER_NODE_ID: id, SVC_CLUSTER_ROLE: role,
    SVC_CLUSTER_ETCD_ENDPOINTS: endpoints.join(','), SVC_CLUSTER_FAILOVER_TIMEOUT: '5s', SVC_CLUSTER_HEARTBEAT_INTERVAL: '500ms', SVC_INGEST_MAX_BUFFER_AGE_MS: '1000',
  });
  const dirs: Record<string, string> = { a: mkdtempSync(join(tmpdir(), 'bench-fo-a-')), b: mkdtempSync(join(tmpdir(), 'bench-fo-b-')) };
  const writers: Record<string, TestServer> = { a: await startServer({ env: env('a', 'writer'), dir: dirs.a }) };
  const reader = await startServer({ env: env('r', 'reader') });
  writers.b = await startServer({ env: env('b', 'writer'), dir: dirs.b });
  const primary = async () => ((await (await reader.fetch('/api/v1/cluster')).json()) as { writer: string | null }).writer;
  let lastAck = 0;
  let stop = false;
  let id = 0;
  const client = (async () => {
    while (!stop) {
      const n = id++;
      const r = await reader
        .fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'fo' }, body: `fo,batch=b${n} v=1i ${(Date.UTC(2024, 0, 1) + n) * 1_000_000}`, signal: AbortSignal.timeout(8000) })
        .catch(() => null);
      if (r?.status === 204) lastAck = Date.now();
      else await Bun.sleep(20);
      await r?.arrayBuffer().catch(() => null);
    }
  })();
  const out: number[] = [];
  try {
    for (let k = 0; k < KILLS; k++) {
      let p: string | null = null;
      while (!(p = await primary()) || Date.now() - lastAck > 200) await Bun.sleep(100);
      await writers[p]!.kill();
      const killedAt = Date.now();
      while (lastAck < killedAt) await Bun.sleep(20);
      out.push(lastAck - killedAt);
      writers[p] = await startServer({ env: env(p, 'writer'), dir: dirs[p] });
    }
  } finally {
    stop = true;
    await client;
    for (const w of Object.values(writers)) await w.kill();
    await reader.kill();
    for (const d of Object.values(dirs)) rmSync(d, { recursive: true, force: true });
  }
  return out;
}

/** Milliseconds until `probe` holds (polled every 10 ms; gives up after 60 s). */
async function msUntil(what: string, probe: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  while (!(await probe().catch(() => false))) {
    if (performance.now() - start > 60_000) throw new Error(`${what} did not happen in 60 s`);
    await Bun.sleep(10);
  }
  return performance.now() - start;
}

/** How soon changes reach other nodes: tokens and flushed files `REPLICATION` times, then one compactor takeover and one graceful leave. */
async function replicationTimes(etcd: TestEtcd, bucket: Record<string, string>): Promise<Record<string, number[]>> {
  const env = (id: string, role: string) => ({ ...bucket, ...common, ...clusterNodeEnv(etcd, 'rep', id, role), SVC_CLUSTER_FAILOVER_TIMEOUT: '3s' });
  const [writer, reader, first] = await Promise.all([startServer({ env: env('w', 'writer') }), startServer({ env: env('r', 'reader') }), startServer({ env: env('ca', 'compactor') })]);
  const compactors: Record<string, TestServer> = { ca: first };
  const cluster = async () => (await (await reader.fetch('/api/v1/cluster')).json()) as { compactor: string | null; nodes: { total: number } };
  const keys = { token: 'token made on the writer, working on the reader', file: 'file flushed on the writer, queryable on the reader', takeover: 'compactor takeover after kill -9 (failover_timeout 3 s)', leave: 'graceful leave seen by the reader' };
  const out: Record<string, number[]> = Object.fromEntries(Object.values(keys).map((k) => [k, []]));
  try {
    await msUntil('the first compactor to lead', async () => (await cluster()).compactor === 'ca');
    compactors.cb = await startServer({ env: env('cb', 'compactor') });
    const rows = async () => Number((((await (await reader.fetch('/api/v1/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: 'SELECT count(*) FROM rep.m' }) })).json()) as { data?: number[][] }).data ?? [[0]])[0]![0]);
    for (let i = 0; i < REPLICATION; i++) {
      const created = await writer.fetch('/api/v1/auth/tokens', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `rep-${i}`, permissions: ['read'] }) });
      const { token } = (await created.json()) as { token: string };
      out[keys.token]!.push(await msUntil('the token on the reader', async () => (await reader.fetch('/api/v1/auth/verify', { token })).status === 200));
      await writer.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'rep' }, body: `m v=${i} ${(Date.UTC(2024, 0, 1) + i * 1000) * 1_000_000}` });
      await writer.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
      out[keys.file]!.push(await msUntil('the file on the reader', async () => (await rows()) === i + 1));
    }
    await msUntil('four nodes', async () => (await cluster()).nodes.total === 4);
    await compactors.ca!.kill();
    out[keys.takeover]!.push(await msUntil('cb to lead', async () => (await cluster()).compactor === 'cb'));
    const left = performance.now();
    await compactors.cb!.stop();
    await msUntil('cb to leave', async () => (await cluster()).compactor === null);
    out[keys.leave]!.push(performance.now() - left);
  } finally {
    await Promise.all([writer, reader, ...Object.values(compactors)].map((n) => n.kill()));
  }
  return out;
}

/**
 * Cluster cost benchmark (`bun run bench:cluster`): the same line-protocol ingest and the same
 * queries against a standalone server on s3rver and against a cluster on s3rver (a writer taking the
 * writes, a reader answering the queries, three etcd members), in one run. Prints ingest lines/s and
 * query latency (median of repeated calls) side by side with the ratio and the difference.
 * Env: BENCH_SECONDS (ingest time per turn, default 4), BENCH_CONCURRENCY (default 4), BENCH_QUERIES
 * (calls per query per turn, default 30), BENCH_ROUNDS (alternating turns, default 3); medians of the turns. Needs etcd (Debian etcd-server) on PATH.
 */
import { startEtcd } from '../tests/helpers/etcd.ts';
import { startS3rver } from '../tests/helpers/s3rver.ts';
import { startServer, type TestServer } from '../tests/helpers/server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 30);
const LINES = 5000;
/** Alternating turns per side (each turn: BENCH_SECONDS of ingest, BENCH_QUERIES calls per query). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

function body(batch: number): string {
  const t0 = Date.UTC(2024, 0, 1) + batch * LINES;
  const out: string[] = [];
  for (let i = 0; i < LINES; i++)
    out.push(`cpu,host=host_${i % 100},region=region_${i % 10} usage_user=${(i % 97) + 0.5},usage_system=${(i % 13) + 0.25},usage_idle=${(i % 7) + 0.125},io_wait=${i % 5},load=${(i % 11) + 0.5} ${(t0 + i) * 1_000_000}`);
  return out.join('\n');
}

async function ingest(s: TestServer): Promise<number> {
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
  return lines / ((performance.now() - start) / 1000);
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

const [etcd, s3] = await Promise.all([startEtcd(3), startS3rver(['solo', 'clus'])]);
const common = { SVC_MEMORY_ENABLED: 'false', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' };
const results: Record<string, { solo: number; cluster: number }> = {};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  // Both set-ups run side by side and take turns, so drift in the machine's load hits both alike.
  const cl = (id: string, role: string) => ({ ...s3.env('clus'), ...common, SVC_CLUSTER_ENABLED: 'true', SVC_CLUSTER_NODE_ID: id, SVC_CLUSTER_ROLE: role, SVC_CLUSTER_ETCD_ENDPOINTS: etcd.endpoints.join(',') });
  const [solo, writer, reader] = await Promise.all([startServer({ env: { ...s3.env('solo'), ...common } }), startServer({ env: cl('w', 'writer') }), startServer({ env: cl('r', 'reader') })]);
  await Bun.sleep(1500); // the writer wins its election
  const soloRates: number[] = [];
  const clusterRates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    soloRates.push(await ingest(solo));
    clusterRates.push(await ingest(writer));
  }
  await solo.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
  await writer.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
  await Bun.sleep(500);
  results['ingest (lines/s)'] = { solo: median(soloRates), cluster: median(clusterRates) };
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
} finally {
  await Promise.all([etcd.stop(), s3.close()]);
}

console.log(`\nbench:cluster — ${ROUNDS} alternating turns per side of ${SECONDS}s of ingest, ${CONCURRENCY} connections, ${LINES}-line bodies; ${QUERIES} calls per query\n`);
console.log('| measure | standalone | cluster | ratio | difference |');
console.log('|---|---:|---:|---:|---:|');
for (const [k, v] of Object.entries(results)) {
  const fmt = (x: number) => (k.startsWith('ingest') ? `${(x / 1e6).toFixed(2)}M` : x.toFixed(2));
  console.log(`| ${k} | ${fmt(v.solo)} | ${fmt(v.cluster)} | ${(v.cluster / v.solo).toFixed(3)} | ${k.startsWith('ingest') ? '' : `${(v.cluster - v.solo).toFixed(2)} ms`} |`);
}

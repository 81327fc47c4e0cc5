/**
 * Prometheus remote-write benchmark (`bun run bench:prom`): samples/s acknowledged by svc's
 * POST /api/v1/prom/write and by VictoriaMetrics' own /api/v1/write on the same snappy+protobuf
 * payloads, in the same run, from a bounded concurrent client on loopback. "flushed" divides by the
 * time until everything acknowledged is also in storage (svc: explicit flush; VictoriaMetrics:
 * /internal/force_flush), the honest figure when a server acks faster than it writes.
 *
 * Payload: 2,000 samples per request, one per series, as Prometheus sends a scrape's worth (its
 * shards batch samples of many series at the same few timestamps): `BENCH_METRICS` metric names
 * (default 10), labels job, instance (200 values), region (5); 64 distinct bodies, each one scrape
 * later than the one before, cycled. VictoriaMetrics runs when /usr/bin/victoria-metrics is installed.
 * Env: BENCH_SECONDS (default 10), BENCH_CONCURRENCY (default 4).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { remoteWriteBody, type Series } from '../tests/helpers/prom-write.ts';
import { ADMIN_TOKEN, startServer } from '../tests/helpers/server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const SERIES = 2000;
const SAMPLES = 1;
const BODIES = 64;
const METRICS = Number(process.env.BENCH_METRICS ?? 10);
const VM = '/usr/bin/victoria-metrics';

const t0 = Date.now() - 3_600_000;
const bodies: Uint8Array[] = [];
for (let b = 0; b < BODIES; b++) {
  const series: Series[] = [];
  for (let s = 0; s < SERIES; s++) {
    const samples: [number, number][] = [];
    for (let k = 0; k < SAMPLES; k++) samples.push([Math.random() * 1000, t0 + (b * SAMPLES + k) * 15_000]);
    series.push({ labels: { __name__: `bench_metric_${s % METRICS}`, job: 'bench', instance: `host-${Math.floor(s / METRICS) % 200}:9100`, region: `r${s % 5}` }, samples });
  }
  bodies.push(remoteWriteBody(series));
}
const perRequest = SERIES * SAMPLES;

interface Outcome {
  acked: number;
  ackSeconds: number;
  flushedSeconds: number;
}

/** Runs the load against `url` for SECONDS, then `flush`; every request must answer 2xx. */
async function load(url: string, headers: Record<string, string>, flush: () => Promise<void>): Promise<Outcome> {
  let sent = 0;
  let next = 0;
  const started = performance.now();
  const until = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const body = bodies[next++ % BODIES]!;
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', ...headers }, body });
        if (res.status >= 300) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
        sent += perRequest;
      }
    }),
  );
  const acked = performance.now();
  await flush();
  return { acked: sent, ackSeconds: (acked - started) / 1000, flushedSeconds: (performance.now() - started) / 1000 };
}

async function freePort(): Promise<number> {
  const l = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = l.port;
  l.stop(true);
  return port;
}

const rate = (o: Outcome) => ({ acked: o.acked / o.ackSeconds, flushed: o.acked / o.flushedSeconds });
const fmt = (n: number) => `${Math.round(n).toLocaleString('en-US')} samples/s`;

const server = await startServer({ env: { SVC_MEMORY_ENABLED: 'false' }, executable: process.env.BENCH_EXECUTABLE });
let svc: Outcome;
try {
  svc = await load(`${server.url}/api/v1/prom/write?db=bench`, { authorization: `Bearer ${ADMIN_TOKEN}` }, async () => {
    const r = await server.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
    if (r.status !== 200) throw new Error(`flush answered ${r.status}`);
  });
} finally {
  await server.cleanup();
}
console.log(`svc remote_write:              ${fmt(rate(svc).acked)} acknowledged, ${fmt(rate(svc).flushed)} flushed (${svc.acked.toLocaleString('en-US')} samples, ${CONCURRENCY} clients, ${SECONDS}s)`);

if (existsSync(VM)) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-vm-'));
  const port = await freePort();
  const vm = Bun.spawn([VM, `-storageDataPath=${dir}`, `-httpListenAddr=127.0.0.1:${port}`, '-retentionPeriod=100y', '-loggerLevel=ERROR'], { stdout: 'ignore', stderr: 'inherit' });
  try {
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 200 && (await fetch(`${base}/health`).catch(() => null))?.status !== 200; i++) await Bun.sleep(50);
    const v = await load(`${base}/api/v1/write`, {}, async () => {
      await fetch(`${base}/internal/force_flush`);
    });
    console.log(`VictoriaMetrics /api/v1/write: ${fmt(rate(v).acked)} acknowledged, ${fmt(rate(v).flushed)} flushed (${v.acked.toLocaleString('en-US')} samples)`);
    console.log(`ratio svc / VictoriaMetrics:   ${(rate(svc).acked / rate(v).acked).toFixed(2)}x acknowledged, ${(rate(svc).flushed / rate(v).flushed).toFixed(2)}x flushed`);
  } finally {
    vm.kill('SIGTERM');
    await vm.exited;
    rmSync(dir, { recursive: true, force: true });
  }
} else console.log(`VictoriaMetrics: not installed (${VM} missing), no comparison in this run`);

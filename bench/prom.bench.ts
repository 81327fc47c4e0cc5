/**
 * Prometheus remote-write benchmark (`bun run bench:prom`): samples/s acknowledged by svc's
 * POST /api/v1/prom/write and by VictoriaMetrics' own /api/v1/write on the same snappy+protobuf
 * payloads, in the same run, from a bounded concurrent client on loopback. "flushed" divides by the
 * time until everything acknowledged is also in storage (svc: explicit flush; VictoriaMetrics:
 * /internal/force_flush), the honest figure when a server acks faster than it writes.
 *
 * The two servers run side by side and take alternating turns of load (BENCH_TURNS, default 5, sharing
 * BENCH_SECONDS each), so both see the same machine; the ratio is the median of the turns' ratios. Samples
 * per CPU-second of each server process (from /proc, all threads) are reported too: on a machine shared
 * with other work they vary far less than samples per wall-clock second.
 *
 * Payload: 2,000 samples per request, one per series, as Prometheus sends a scrape's worth (its
 * shards batch samples of many series at the same few timestamps): `BENCH_METRICS` metric names
 * (default 10), labels job, instance (200 values), region (5); 64 distinct bodies, each one scrape
 * later than the one before, cycled (BENCH_SHUFFLE=1: series in a random order in each). VictoriaMetrics runs when /usr/bin/victoria-metrics is installed.
 * Env: BENCH_SECONDS (default 10, per server), BENCH_CONCURRENCY (default 4), BENCH_EXECUTABLE (a built
 * svc executable, or a wrapper that adds --cpu-prof).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { remoteWriteBody, type Series } from '../tests/helpers/prom-write.ts';
import { ADMIN_TOKEN, startServer } from '../tests/helpers/server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const TURNS = Number(process.env.BENCH_TURNS ?? 5);
/** Series in a new random order in every body (senders that do not repeat their order: no successor guess hits). */
const SHUFFLE = process.env.BENCH_SHUFFLE === '1';
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
  if (SHUFFLE)
    for (let i = series.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [series[i], series[j]] = [series[j]!, series[i]!];
    }
  bodies.push(remoteWriteBody(series));
}
const perRequest = SERIES * SAMPLES;

/** Runs the load against `url` for `seconds`; every request must answer 2xx. Returns samples acknowledged. */
async function load(url: string, headers: Record<string, string>, seconds: number): Promise<number> {
  let sent = 0;
  let next = 0;
  const until = performance.now() + seconds * 1000;
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
  return sent;
}

async function freePort(): Promise<number> {
  const l = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = l.port;
  l.stop(true);
  return port;
}

/** One server under test: where to send, and how to make it write out what it acknowledged. */
interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  flush: () => Promise<void>;
  /** Process whose CPU time is read from /proc (threads included). */
  pid: number;
  /** Samples/s of each turn. */
  turns: number[];
  /** Samples per CPU-second of the server process, each turn. */
  perCpu: number[];
  acked: number;
  loadSeconds: number;
}

/** User + system CPU seconds a process has used so far, all threads (Linux /proc; clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const fmt = (n: number) => `${Math.round(n).toLocaleString('en-US')} samples/s`;

const server = await startServer({ env: { SVC_MEMORY_ENABLED: 'false' }, executable: process.env.BENCH_EXECUTABLE });
const targets: Target[] = [
  {
    name: 'svc remote_write',
    url: `${server.url}/api/v1/prom/write?db=bench`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    flush: async () => {
      const r = await server.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
      if (r.status !== 200) throw new Error(`flush answered ${r.status}`);
    },
    pid: server.proc.pid,
    turns: [],
    perCpu: [],
    acked: 0,
    loadSeconds: 0,
  },
];
let vm: ReturnType<typeof Bun.spawn> | null = null;
const vmDir = mkdtempSync(join(tmpdir(), 'svc-bench-vm-'));
try {
  if (existsSync(VM)) {
    const port = await freePort();
    vm = Bun.spawn([VM, `-storageDataPath=${vmDir}`, `-httpListenAddr=127.0.0.1:${port}`, '-retentionPeriod=100y', '-loggerLevel=ERROR'], { stdout: 'ignore', stderr: 'inherit' });
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 200 && (await fetch(`${base}/health`).catch(() => null))?.status !== 200; i++) await Bun.sleep(50);
    targets.push({
      name: 'VictoriaMetrics /api/v1/write',
      url: `${base}/api/v1/write`,
      headers: {},
      flush: async () => {
        await fetch(`${base}/internal/force_flush`);
      },
      pid: vm.pid,
      turns: [],
      perCpu: [],
      acked: 0,
      loadSeconds: 0,
    });
  } else console.log(`VictoriaMetrics: not installed (${VM} missing), no comparison in this run`);

  // Alternating turns (the order swapped every turn), so both see the same machine: the load from
  // other work on a shared machine changes by the second and would skew two back-to-back runs.
  const turnSeconds = SECONDS / TURNS;
  // Warm-up, not counted: the first requests carry series neither server has seen (and JIT warm-up).
  for (const target of targets) await load(target.url, target.headers, 1);
  for (let t = 0; t < TURNS; t++) {
    for (const target of t % 2 === 0 ? targets : [...targets].reverse()) {
      const cpu0 = cpuSeconds(target.pid);
      const started = performance.now();
      const sent = await load(target.url, target.headers, turnSeconds);
      const seconds = (performance.now() - started) / 1000;
      target.turns.push(sent / seconds);
      target.perCpu.push(sent / (cpuSeconds(target.pid) - cpu0));
      target.acked += sent;
      target.loadSeconds += seconds;
    }
  }
  const flushed: number[] = [];
  for (const target of targets) {
    const started = performance.now();
    await target.flush();
    flushed.push(target.acked / (target.loadSeconds + (performance.now() - started) / 1000));
  }
  targets.forEach((target, i) =>
    console.log(
      `${`${target.name}:`.padEnd(31)}${fmt(median(target.turns))} acknowledged (median of ${TURNS} turns of ${turnSeconds.toFixed(1)} s), ${fmt(flushed[i]!)} flushed, ${Math.round(median(target.perCpu)).toLocaleString('en-US')} samples per CPU-second (${target.acked.toLocaleString('en-US')} samples, ${CONCURRENCY} clients)`,
    ),
  );
  if (targets.length === 2) {
    const ratios = targets[0]!.turns.map((r, i) => r / targets[1]!.turns[i]!);
    const cpuRatios = targets[0]!.perCpu.map((r, i) => r / targets[1]!.perCpu[i]!);
    console.log(
      `ratio svc / VictoriaMetrics:   ${median(ratios).toFixed(2)}x acknowledged (median of the turns' ratios; turns ${ratios.map((r) => r.toFixed(2)).join(' ')}), ${(flushed[0]! / flushed[1]!).toFixed(2)}x flushed`,
    );
    // Samples per CPU-second of each server's own process: what a busy shared machine disturbs least.
    console.log(`ratio per CPU-second:          ${median(cpuRatios).toFixed(2)}x (turns ${cpuRatios.map((r) => r.toFixed(2)).join(' ')})`);
  }
} finally {
  await server.cleanup();
  if (vm) {
    vm.kill('SIGTERM');
    await vm.exited;
  }
  rmSync(vmDir, { recursive: true, force: true });
}

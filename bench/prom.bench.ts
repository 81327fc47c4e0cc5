/**
 * Prometheus remote-write benchmark (`bun run bench:prom`): samples/s acknowledged by svc's
 * POST /api/v1/prom/write (remote-write 1.0, and 2.0 on the same samples) and by VictoriaMetrics' own
 * /api/v1/write (1.0; 2.0 too if the installed version answers 2.0 with the Written headers), in the same run, from a bounded concurrent client on loopback. "flushed" divides by the
 * time until everything acknowledged is also in storage (svc: explicit flush; VictoriaMetrics:
 * /internal/force_flush), the honest figure when a server acks faster than it writes.
 *
 * The targets run side by side and take turns of load (BENCH_TURNS, default 5, sharing BENCH_SECONDS
 * each; the order rotates every turn), so all see the same machine; a ratio is the median of the turns' ratios. Samples
 * per CPU-second of each server process (from /proc, all threads) are reported too: on a machine shared
 * with other work they vary far less than samples per wall-clock second.
 *
 * Payload: 2,000 samples per request, one per series, as Prometheus sends a scrape's worth (its
 * shards batch samples of many series at the same few timestamps): `BENCH_METRICS` metric names
 * (default 10), labels job, instance (200 values), region (5); 64 distinct bodies, each one scrape
 * later than the one before, cycled (BENCH_SHUFFLE=1: series in a random order in each). VictoriaMetrics runs when /usr/bin/victoria-metrics is installed.
 * Env: BENCH_SECONDS (default 10, per server), BENCH_CONCURRENCY (default 4), BENCH_EXECUTABLE (a built
 * svc executable, or a wrapper that adds --cpu-prof), BENCH_BASE (another checkout of svc, e.g. main's:
 * its 1.0 route joins the turns as one more target, for a before/after ratio measured in the same run),
 * BENCH_SVC_ENV (`NAME=value,...` for this tree's two svc processes only, not BENCH_BASE's: e.g.
 * `MIMALLOC_PURGE_DELAY=-1`, the allocator setting svc.service recommends, against a base without it).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { remoteWriteBody, remoteWriteBodyV2, type Series, V2_HEADERS } from '../tests/helpers/prom-write.ts';
import { ADMIN_TOKEN, startServer } from '../tests/helpers/server.ts';
import { cpuSeconds } from './proc-stat.ts';

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
/** The same samples as 2.0 Requests. */
const bodiesV2: Uint8Array[] = [];
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
  bodiesV2.push(remoteWriteBodyV2(series));
}
const V1_HEADERS = { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' };
const perRequest = SERIES * SAMPLES;

/** Runs the load of `bodies` against `url` for `seconds`; every request must answer 2xx. Returns samples acknowledged. */
async function load(url: string, headers: Record<string, string>, bodies: Uint8Array[], seconds: number): Promise<number> {
  let sent = 0;
  let next = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const body = bodies[next++ % BODIES]!;
        const res = await fetch(url, { method: 'POST', headers, body });
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
  bodies: Uint8Array[];
  flush: () => Promise<void>;
  /** Process whose CPU time is read from /proc (threads included). */
  pid: number;
  /** Samples/s of each turn. */
  turns: number[];
  /** Samples per CPU-second of the server process, each turn. */
  perCpu: number[];
  /** CPU seconds of the main thread and of the other threads over all turns. */
  threads: { main: number; other: number };
  acked: number;
  loadSeconds: number;
}

/** CPU seconds of a process' main thread (the event loop: HTTP, parsing, buffering) and of all its other threads (flush workers, GC, JIT). */
function threadSeconds(pid: number): { main: number; other: number } {
  const out = { main: 0, other: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let seconds: number;
    try {
      seconds = cpuSeconds(pid, Number(tid));
    } catch {
      continue; // the thread ended between the listing and the read
    }
    if (Number(tid) === pid) out.main += seconds;
    else out.other += seconds;
  }
  return out;
}

const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const fmt = (n: number) => `${Math.round(n).toLocaleString('en-US')} samples/s`;

// 1.0 and 2.0 each get a server process of their own: a turn's CPU time and throughput are then its
// own, not shared with the flushes of the other version's rows.
const svcEnv: Record<string, string> = Object.fromEntries(
  (process.env.BENCH_SVC_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const server = await startServer({ env: { SVC_MEMORY_ENABLED: 'false', ...svcEnv }, executable: process.env.BENCH_EXECUTABLE });
const server2 = await startServer({ env: { SVC_MEMORY_ENABLED: 'false', ...svcEnv }, executable: process.env.BENCH_EXECUTABLE });
if (process.env.BENCH_SVC_ENV) console.log(`svc remote_write 1.0 and 2.0 run with ${process.env.BENCH_SVC_ENV}`);
const BASE = process.env.BENCH_BASE;
const baseServer = BASE ? await startServer({ env: { SVC_MEMORY_ENABLED: 'false' }, executable: process.execPath, args: [join(BASE, 'src', 'main.ts')] }) : null;
const flushOf = (s: typeof server) => async () => {
  const r = await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
  if (r.status !== 200) throw new Error(`flush answered ${r.status}`);
};
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const target = (name: string, url: string, headers: Record<string, string>, bodies: Uint8Array[], flush: () => Promise<void>, pid: number): Target => ({
  name,
  url,
  headers,
  bodies,
  flush,
  pid,
  turns: [],
  perCpu: [],
  threads: { main: 0, other: 0 },
  acked: 0,
  loadSeconds: 0,
});
const targets: Target[] = [
  target('svc remote_write 1.0', `${server.url}/api/v1/prom/write?db=bench`, { ...V1_HEADERS, ...auth }, bodies, flushOf(server), server.proc.pid),
  target('svc remote_write 2.0', `${server2.url}/api/v1/prom/write?db=bench`, { ...V2_HEADERS, ...auth }, bodiesV2, flushOf(server2), server2.proc.pid),
];
if (baseServer)
  targets.push(target(`svc ${BASE} 1.0`, `${baseServer.url}/api/v1/prom/write?db=bench`, { ...V1_HEADERS, ...auth }, bodies, flushOf(baseServer), baseServer.proc.pid));
let vm: ReturnType<typeof Bun.spawn> | null = null;
const vmDir = mkdtempSync(join(tmpdir(), 'svc-bench-vm-'));
try {
  if (existsSync(VM)) {
    const port = await freePort();
    vm = Bun.spawn([VM, `-storageDataPath=${vmDir}`, `-httpListenAddr=127.0.0.1:${port}`, '-retentionPeriod=100y', '-loggerLevel=ERROR'], { stdout: 'ignore', stderr: 'inherit' });
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 200 && (await fetch(`${base}/health`).catch(() => null))?.status !== 200; i++) await Bun.sleep(50);
    const vmFlush = async () => {
      await fetch(`${base}/internal/force_flush`);
    };
    // The Debian build reports an empty vm_app_version: ask the package manager.
    const version = Bun.spawnSync(['dpkg-query', '-W', '-f=${Version}', 'victoria-metrics']).stdout.toString().trim() || 'unknown version';
    targets.push(target('VictoriaMetrics 1.0', `${base}/api/v1/write`, V1_HEADERS, bodies, vmFlush, vm.pid));
    // A 2.0 receiver must answer a 2.0 body with the Written headers (the spec's own test for a 1.0-only receiver).
    const probe = await fetch(`${base}/api/v1/write`, { method: 'POST', headers: V2_HEADERS, body: bodiesV2[0]! });
    if (probe.headers.has('x-prometheus-remote-write-samples-written'))
      targets.push(target('VictoriaMetrics 2.0', `${base}/api/v1/write`, V2_HEADERS, bodiesV2, vmFlush, vm.pid));
    else console.log(`VictoriaMetrics ${version} (Debian package): no remote-write 2.0 (a 2.0 body answered ${probe.status} without X-Prometheus-Remote-Write-*-Written headers), compared on 1.0 only`);
  } else console.log(`VictoriaMetrics: not installed (${VM} missing), no comparison in this run`);

  // Alternating turns (the order swapped every turn), so both see the same machine: the load from
  // other work on a shared machine changes by the second and would skew two back-to-back runs.
  const turnSeconds = SECONDS / TURNS;
  // Warm-up, not counted: the first requests carry series neither server has seen (and JIT warm-up).
  for (const target of targets) await load(target.url, target.headers, target.bodies, 1);
  for (let t = 0; t < TURNS; t++) {
    for (const target of [...targets.slice(t % targets.length), ...targets.slice(0, t % targets.length)]) {
      const cpu0 = cpuSeconds(target.pid);
      const threads0 = threadSeconds(target.pid);
      const started = performance.now();
      const sent = await load(target.url, target.headers, target.bodies, turnSeconds);
      const seconds = (performance.now() - started) / 1000;
      const threads1 = threadSeconds(target.pid);
      target.threads.main += threads1.main - threads0.main;
      target.threads.other += threads1.other - threads0.other;
      target.turns.push(sent / seconds);
      target.perCpu.push(sent / (cpuSeconds(target.pid) - cpu0));
      target.acked += sent;
      target.loadSeconds += seconds;
    }
  }
  const flushed = new Map<Target, number>();
  for (const target of targets) {
    const started = performance.now();
    await target.flush();
    flushed.set(target, target.acked / (target.loadSeconds + (performance.now() - started) / 1000));
  }
  for (const target of targets)
    console.log(
      `${`${target.name}:`.padEnd(31)}${fmt(median(target.turns))} acknowledged (median of ${TURNS} turns of ${turnSeconds.toFixed(1)} s), ${fmt(flushed.get(target)!)} flushed, ${Math.round(median(target.perCpu)).toLocaleString('en-US')} samples per CPU-second (${target.acked.toLocaleString('en-US')} samples, ${CONCURRENCY} clients)`,
    );
  for (const target of targets) {
    const { main, other } = target.threads;
    console.log(`${`${target.name}:`.padEnd(31)}main thread ${main.toFixed(1)} CPU-s (${Math.round((100 * main) / (main + other))}%), other threads ${other.toFixed(1)} CPU-s over the turns`);
  }
  const ratio = (label: string, a: Target | undefined, b: Target | undefined) => {
    if (!a || !b) return;
    const ratios = a.turns.map((r, i) => r / b.turns[i]!);
    const cpuRatios = a.perCpu.map((r, i) => r / b.perCpu[i]!);
    console.log(
      `ratio ${label}: ${median(ratios).toFixed(2)}x acknowledged (median of the turns' ratios; turns ${ratios.map((r) => r.toFixed(2)).join(' ')}), ${(flushed.get(a)! / flushed.get(b)!).toFixed(2)}x flushed; ${median(cpuRatios).toFixed(2)}x per CPU-second of each server process (turns ${cpuRatios.map((r) => r.toFixed(2)).join(' ')})`,
    );
  };
  const byName = (prefix: string) => targets.find((t) => t.name.startsWith(prefix));
  const [v1, v2, vm1, vm2, base] = [byName('svc remote_write 1.0'), byName('svc remote_write 2.0'), byName('VictoriaMetrics 1.0'), byName('VictoriaMetrics 2.0'), baseServer ? byName(`svc ${BASE}`) : undefined];
  ratio('svc 1.0 / VictoriaMetrics 1.0', v1, vm1);
  ratio(`svc ${BASE} 1.0 / VictoriaMetrics 1.0`, base, vm1);
  ratio(`svc 1.0 / svc ${BASE} 1.0`, v1, base);
  ratio('svc 2.0 / svc 1.0', v2, v1);
  ratio('svc 2.0 / VictoriaMetrics 2.0', v2, vm2);
} finally {
  await server.cleanup();
  await server2.cleanup();
  await baseServer?.cleanup();
  if (vm) {
    vm.kill('SIGTERM');
    await vm.exited;
  }
  rmSync(vmDir, { recursive: true, force: true });
}

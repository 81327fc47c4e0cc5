/**
 * End-to-end ingest benchmark (`bun run bench:ingest`). Per format, svc and its references run side by
 * side and take alternating turns of load (BENCH_TURNS, default 5, of BENCH_SECONDS each; the order is
 * reversed every other turn), so every target sees the same moments of a shared machine; each ratio is
 * the median of the turns' ratios. Per turn it prints acknowledged records/s (2xx answers during the
 * load) and on-disk records/s: the rows of the turn divided by the load plus the flush that puts them
 * into Parquet (svc) or into parts (VictoriaMetrics' force_flush): the honest figure, since a server can
 * ack faster than it writes. svc's rows are counted back through SQL at the end.
 *
 * The load comes from a C client, `wrk` (4 connections, pre-built bodies cycled by a Lua script), when
 * it is installed; otherwise from concurrent `fetch` loops in this process (said in the output). References:
 * - decode-only: a tiny Bun.serve in a child process that only decompresses and parses with our
 *   parsers, storing nothing (the ceiling for our HTTP stack and parsers); the Bun references run
 *   with the allocator setting svc gives itself (MIMALLOC_PURGE_DELAY=-1) unless the caller set one;
 * - msgpackr-only (MessagePack): the same with msgpackr's generic `unpack` instead of our parser, the
 *   reference as the issue words it ("HTTP + msgpackr"); decode-only, with our faster parser, is the
 *   stricter ceiling and the one the goal is read against;
 * - split-only (line protocol): a Bun.serve that only splits the body on newlines;
 * - VictoriaMetrics' `/write` (`/usr/bin/victoria-metrics`) and InfluxDB 1.x (`influxd`) when installed.
 * Each server's CPU seconds (all threads, and its event loop's), its event loop's minor page faults and
 * peak RSS during its turns are read from /proc.
 *
 * Shape: time, host (100 values), region (10 values), five float fields. MessagePack: 10,000-row
 * columnar batches; line protocol: 5,000-line batches; BODIES distinct bodies per format, each later
 * than the one before, cycled (wrk cannot restamp bodies, so a long run repeats points: see README).
 * Each format gets a fresh server. (Over 400 lines: the load clients, the five kinds of target and the
 * turn loop share the bodies and counters; split, they would pass most of them around.)
 * Env: BENCH_TURNS (default 5), BENCH_SECONDS (default 4 per turn), BENCH_WARMUP (default 3, per target),
 * BENCH_CONCURRENCY (default 4), BENCH_EXECUTABLE (run e.g. dist/svc instead of `bun src/main.ts`),
 * BENCH_FORMATS (msgpack,lp), BENCH_CLIENT (wrk | fetch), BENCH_PROFILE (a directory: the svc server
 * runs with --cpu-prof there), BENCH_BASELINE (another checkout, e.g. `git worktree add /tmp/base main`
 * with node_modules linked: its `src/main.ts` runs as one more target, "svc (baseline)", taking turns
 * with the others, so before and after come from the same run), BENCH_SVC_ENV (`NAME=value,...`: settings for
 * svc only, not the baseline).
 */
import { Packr, unpack } from 'msgpackr';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decompress, parseLineProtocol, parseMsgpackWrite } from '../src/ingest/index.ts';
import { RETAIN_FREED_MEMORY } from '../src/native/index.ts';
import { cpuSeconds, minorFaults } from './proc-stat.ts';
import { ADMIN_TOKEN, startServer } from '../tests/helpers/server.ts';

/** Seconds of load per turn. */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
/** Seconds of load before the measured run, for svc and VictoriaMetrics alike (svc's JIT warms up, VictoriaMetrics registers its series). */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const TURNS = Number(process.env.BENCH_TURNS ?? 5);
const FORMATS = (process.env.BENCH_FORMATS ?? 'msgpack,lp').split(',');
const WRK = process.env.BENCH_CLIENT === 'fetch' ? null : Bun.which('wrk');
const VM = Bun.which('victoria-metrics') ?? (existsSync('/usr/bin/victoria-metrics') ? '/usr/bin/victoria-metrics' : null);
const INFLUXD = Bun.which('influxd');
const MSGPACK_ROWS = 10_000;
const LP_LINES = 5_000;
const BODIES = 32;

if (process.argv[2] === '--decode-only-server' || process.argv[2] === '--split-only-server' || process.argv[2] === '--msgpackr-only-server') {
  const splitOnly = process.argv[2] === '--split-only-server';
  const msgpackrOnly = process.argv[2] === '--msgpackr-only-server';
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    maxRequestBodySize: 1 << 30,
    async fetch(req) {
      const raw = new Uint8Array(await req.arrayBuffer());
      if (splitOnly) {
        // The floor of any line-protocol server in Bun: find every line, look at nothing else.
        let lines = 0;
        for (let at = raw.indexOf(10); at >= 0; at = raw.indexOf(10, at + 1)) lines++;
        if (lines === 0) return new Response('no lines', { status: 400 });
        return new Response(null, { status: 204 });
      }
      const body = decompress(raw, 1 << 30);
      // The issue's own wording of the ceiling: a generic decoder making JS values, nothing checked.
      if (msgpackrOnly) return unpack(body) === undefined ? new Response('empty', { status: 400 }) : new Response(null, { status: 204 });
      const now = Date.now() * 1000;
      if (new URL(req.url).pathname === '/api/v1/write/msgpack') parseMsgpackWrite(body, { now });
      else parseLineProtocol(body, { precision: 'ns', now });
      return new Response(null, { status: 204 });
    },
  });
  process.stdout.write(`reference listening ${server.port}\n`);
  await new Promise(() => {});
}

/** First time of the load (epoch µs); body `b` holds the times after those of body b - 1. */
const T0_MICROS = (Date.now() - 3_600_000) * 1000;

function msgpackBody(batch: number): Uint8Array {
  const t0 = T0_MICROS + batch * MSGPACK_ROWS;
  const cols: Record<string, unknown[]> = { time: [], host: [], region: [], usage_user: [], usage_system: [], usage_idle: [], io_wait: [], load: [] };
  for (let i = 0; i < MSGPACK_ROWS; i++) {
    cols.time!.push(t0 + i);
    cols.host!.push(`host_${i % 100}`);
    cols.region!.push(`region_${i % 10}`);
    for (const f of ['usage_user', 'usage_system', 'usage_idle', 'io_wait', 'load']) cols[f]!.push(Math.random() * 100 + 0.5);
  }
  return new Packr({ useRecords: false }).pack({ m: 'cpu', columns: cols });
}

function lineBody(batch: number): Uint8Array {
  const t0 = BigInt(T0_MICROS) * 1000n + BigInt(batch * LP_LINES) * 1000n;
  const lines: string[] = [];
  for (let i = 0; i < LP_LINES; i++)
    lines.push(
      `cpu,host=host_${i % 100},region=region_${i % 10} usage_user=${(Math.random() * 100).toFixed(3)},usage_system=${(Math.random() * 10).toFixed(3)},` +
        `usage_idle=${(Math.random() * 100).toFixed(3)},io_wait=${Math.random().toFixed(4)},load=${(Math.random() * 4).toFixed(2)} ${t0 + BigInt(i) * 1000n}`,
    );
  return new TextEncoder().encode(lines.join('\n') + '\n');
}

interface LoadResult {
  /** Requests answered 2xx, times records per body. */
  acked: number;
  errors: number;
  seconds: number;
  /** performance.now() when the load started. */
  started: number;
}

/** wrk's Lua side: every request string is built once in `init`; `done` prints the counts as JSON. */
const WRK_SCRIPT = `
local reqs = {}
local n = 0
local i = 0
init = function(args)
  local dir = os.getenv("BENCH_BODY_DIR")
  n = tonumber(os.getenv("BENCH_BODY_COUNT"))
  for k = 1, n do
    local f = assert(io.open(dir .. "/" .. (k - 1) .. ".bin", "rb"))
    reqs[k] = wrk.format("POST", nil, nil, f:read("*a"))
    f:close()
  end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  i = math.random(n)
end
request = function()
  i = i % n + 1
  return reqs[i]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout))
end
`;

/** Writes a format's bodies to files once, for wrk. */
function bodyDir(bodies: Uint8Array[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-bodies-'));
  bodies.forEach((b, k) => writeFileSync(join(dir, `${k}.bin`), b));
  writeFileSync(join(dir, 'load.lua'), WRK_SCRIPT);
  return dir;
}

async function wrkLoad(wrk: string, url: string, headers: Record<string, string>, dir: string, records: number, seconds = SECONDS): Promise<LoadResult> {
  const args = [wrk, '-t', String(Math.min(2, CONCURRENCY)), '-c', String(CONCURRENCY), '-d', `${seconds}s`, '--timeout', '60s', '-s', join(dir, 'load.lua')];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  const started = performance.now();
  const child = Bun.spawn([...args, url], { env: { ...process.env, BENCH_BODY_DIR: dir, BENCH_BODY_COUNT: String(BODIES) }, stdout: 'pipe', stderr: 'pipe' });
  const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
  await child.exited;
  const json = /WRKJSON (\{.*\})/.exec(out);
  if (!json) throw new Error(`wrk gave no summary (exit ${child.exitCode}):\n${out}\n${err}`);
  const s = JSON.parse(json[1]!) as { requests: number; duration_us: number; status: number; connect: number; read: number; write: number; timeout: number };
  const errors = s.status + s.connect + s.read + s.write + s.timeout;
  return { acked: (s.requests - s.status) * records, errors, seconds: s.duration_us / 1e6, started };
}

/** The fallback client: CONCURRENCY fetch loops in this process. */
async function fetchLoad(url: string, headers: Record<string, string>, bodies: Uint8Array[], records: number, seconds = SECONDS): Promise<LoadResult> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let acked = 0;
  let errors = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const res = await fetch(url, { method: 'POST', headers, body: bodies[next++ % bodies.length]! });
        await res.arrayBuffer();
        if (res.status < 300) acked += records;
        else errors++;
      }
    }),
  );
  return { acked, errors, seconds: (performance.now() - started) / 1000, started };
}

interface Format {
  name: string;
  path: string;
  headers: Record<string, string>;
  bodies: Uint8Array[];
  dir: string;
  records: number;
}

const load = (f: Format, base: string, path: string, headers: Record<string, string>, seconds = SECONDS) =>
  WRK ? wrkLoad(WRK, `${base}${path}`, headers, f.dir, f.records, seconds) : fetchLoad(`${base}${path}`, headers, f.bodies, f.records, seconds);

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

/**
 * A server loaded in turns: svc or a reference, started once per format and kept running, so every
 * target sees the same moments of a shared machine. `settle` makes what a turn acknowledged durable
 * (svc: its flush into Parquet; VictoriaMetrics: force_flush into parts) and its time counts toward
 * the turn's "on disk" rate.
 */
interface Target {
  name: string;
  url: string;
  path: string;
  headers: Record<string, string>;
  /** The server's process, for CPU and RSS (null: not ours to read). */
  pid: number | null;
  settle?: () => Promise<void>;
  stop(): Promise<void>;
  /** Per turn: rows acknowledged per second of load, and per second of load + settle. */
  acked: number[];
  settled: number[];
  rows: number;
  cpu: number;
  /** CPU seconds of its main thread (the event loop) during its turns. */
  loopCpu: number;
  /** Minor page faults of its event loop during its turns (fresh memory touched: see src/ingest/column-memory.ts). */
  faults: number;
  rss: number;
  errors: number;
}

const target = (t: Pick<Target, 'name' | 'url' | 'path' | 'headers' | 'pid' | 'settle' | 'stop'>): Target => ({ ...t, acked: [], settled: [], rows: 0, cpu: 0, loopCpu: 0, faults: 0, rss: 0, errors: 0 });

/** The decode-only, msgpackr-only or split-only reference: a Bun.serve in a child process. */
async function bunReference(kind: 'decode' | 'msgpackr' | 'split', f: Format): Promise<Target> {
  // Like for like: svc keeps freed memory for reuse by default (server.retain_freed_memory), so the
  // Bun references run with the same allocator setting (their ceiling doubled with it on the test VM).
  const env = { ...RETAIN_FREED_MEMORY, ...process.env };
  const child = Bun.spawn([process.execPath, import.meta.path, `--${kind}-only-server`], { env, stdout: 'pipe', stderr: 'inherit' });
  const reader = child.stdout.getReader();
  let out = '';
  while (!/listening (\d+)/.test(out)) out += new TextDecoder().decode((await reader.read()).value);
  const url = `http://127.0.0.1:${/listening (\d+)/.exec(out)![1]}`;
  return target({ name: `${kind}-only`, url, path: f.path, headers: {}, pid: child.pid, stop: async () => void (child.kill(), await child.exited) });
}


/** Peak resident set size (bytes) of `pid` while `work` runs, sampled every 100 ms. */
async function peakRss<T>(pid: number, work: Promise<T>): Promise<[T, number]> {
  let peak = 0;
  const sample = () => {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (m) peak = Math.max(peak, Number(m[1]) * 1024);
  };
  const timer = setInterval(() => {
    try {
      sample();
    } catch {
      // the process is gone; the caller sees the failure
    }
  }, 100);
  try {
    return [await work, peak];
  } finally {
    clearInterval(timer);
  }
}

async function countRows(url: string): Promise<number> {
  const res = await fetch(`${url}/api/v1/query`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', 'x-svc-database': 'bench' },
    body: JSON.stringify({ sql: 'SELECT count(*) AS n FROM cpu' }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`count query answered ${res.status}: ${text.slice(0, 300)}`);
  const n = /"n"\s*:\s*(\d+)|\[\s*(\d+)\s*\]/.exec(text);
  if (!n) throw new Error(`count query: no count in ${text.slice(0, 300)}`);
  return Number(n[1] ?? n[2]);
}

/**
 * A fresh svc server (under --cpu-prof with BENCH_PROFILE), or with `baseline` one from that checkout's
 * src/main.ts; a turn is settled by the flush route.
 */
async function svcTarget(f: Format, baseline?: string): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const exe = baseline ? undefined : process.env.BENCH_EXECUTABLE;
  const prof = baseline ? undefined : process.env.BENCH_PROFILE;
  if (prof) mkdirSync(prof, { recursive: true });
  const args = baseline
    ? [join(baseline, 'src', 'main.ts')]
    : exe
      ? ['serve']
      : prof
        ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${prof}`, join(import.meta.dir, '..', 'src', 'main.ts')]
        : undefined;
  // BENCH_SVC_ENV (`NAME=value,NAME=value`) configures svc, not the baseline: e.g. a setting tried against main.
  const extra = baseline ? {} : Object.fromEntries((process.env.BENCH_SVC_ENV ?? '').split(',').filter(Boolean).map((kv) => kv.split('=', 2) as [string, string]));
  const server = await startServer({ dir, executable: exe ?? (prof || baseline ? process.execPath : undefined), args, env: { SVC_MEMORY_ENABLED: 'false', ...extra } });
  const t: Target = target({
    name: baseline ? 'svc (baseline)' : 'svc',
    url: server.url,
    path: f.path,
    headers: { ...auth, ...f.headers },
    pid: server.proc.pid,
    settle: async () => {
      const res = await fetch(`${server.url}/api/v1/write/line-protocol/flush`, { method: 'POST', headers: auth });
      await res.arrayBuffer();
      if (res.status !== 200) t.errors++;
    },
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  });
  return t;
}

/** A free loopback port (bound and released). */
function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

async function waitFor(url: string, status: number): Promise<void> {
  for (let i = 0; i < 400 && (await fetch(url).catch(() => null))?.status !== status; i++) await Bun.sleep(50);
}

/**
 * VictoriaMetrics' InfluxDB `/write` on the same bodies; it answers 204 once lines are in its in-memory
 * buffers, and a turn is settled by /internal/force_flush, which puts them into parts.
 */
async function victoriaTarget(vm: string): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-vm-'));
  const port = freePort();
  const child = Bun.spawn([vm, `-storageDataPath=${dir}`, `-httpListenAddr=127.0.0.1:${port}`, '-retentionPeriod=100y', '-loggerLevel=ERROR', '-maxInsertRequestSize=1073741824'], { stdout: 'ignore', stderr: 'inherit' });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health`, 200);
  return target({
    name: 'VictoriaMetrics',
    url,
    path: '/write?db=bench',
    headers: {},
    pid: child.pid,
    settle: async () => void (await (await fetch(`${url}/internal/force_flush`)).arrayBuffer()),
    stop: async () => {
      child.kill('SIGTERM');
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

/** InfluxDB 1.x on loopback: it answers 204 once a batch is in its WAL and cache. */
async function influxTarget(influxd: string): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-influx-'));
  const [http, rpc] = [freePort(), freePort()];
  const conf = join(dir, 'influxdb.conf');
  await Bun.write(
    conf,
    `reporting-disabled = true\nbind-address = "127.0.0.1:${rpc}"\n[meta]\n  dir = "${dir}/meta"\n[data]\n  dir = "${dir}/data"\n  wal-dir = "${dir}/wal"\n  query-log-enabled = false\n` +
      `[http]\n  bind-address = "127.0.0.1:${http}"\n  log-enabled = false\n  max-body-size = 0\n[monitor]\n  store-enabled = false\n`,
  );
  const child = Bun.spawn([influxd, '-config', conf], { stdout: 'ignore', stderr: 'ignore' });
  const url = `http://127.0.0.1:${http}`;
  await waitFor(`${url}/ping`, 204);
  await fetch(`${url}/query?q=${encodeURIComponent('CREATE DATABASE bench')}`, { method: 'POST' });
  return target({
    name: 'InfluxDB 1.x',
    url,
    path: '/write?db=bench',
    headers: {},
    pid: child.pid,
    stop: async () => {
      child.kill();
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

/** One turn of load on `t`, then its settle; adds the turn's rates, rows, CPU and peak RSS to `t`. */
async function turn(t: Target, f: Format, seconds = SECONDS): Promise<void> {
  const cpu0 = t.pid ? cpuSeconds(t.pid) : 0;
  const loop0 = t.pid ? cpuSeconds(t.pid, t.pid) : 0;
  const faults0 = t.pid ? minorFaults(t.pid, t.pid) : 0;
  const work = load(f, t.url, t.path, t.headers, seconds);
  const [r, rss] = t.pid ? await peakRss(t.pid, work) : [await work, 0];
  await t.settle?.();
  const end = performance.now();
  t.acked.push(r.acked / r.seconds);
  t.settled.push(r.acked / ((end - r.started) / 1000));
  t.rows += r.acked;
  t.errors += r.errors;
  if (t.pid) t.cpu += cpuSeconds(t.pid) - cpu0;
  if (t.pid) t.loopCpu += cpuSeconds(t.pid, t.pid) - loop0;
  if (t.pid) t.faults += minorFaults(t.pid, t.pid) - faults0;
  t.rss = Math.max(t.rss, rss);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (r: number) => `${(r / 1e6).toFixed(2)}M`;
const turnRatios = (a: number[], b: number[]) => a.map((x, i) => x / b[i]!);
const ratioText = (rs: number[]) => `${median(rs).toFixed(2)}x (turns ${rs.map((r) => r.toFixed(2)).join(' ')})`;

/** A reference that could not be started is reported, not fatal to the run. */
async function started(name: string, start: () => Promise<Target>): Promise<Target | null> {
  try {
    return await start();
  } catch (e) {
    console.log(`  ${name} failed to start: ${e instanceof Error ? e.message : String(e)}`);
    return null;
  }
}

/** Every target of a format side by side: warm-up, TURNS alternating turns, the count back through SQL. */
async function runFormat(f: Format): Promise<void> {
  const refs: (Target | null)[] = [await started('decode-only', () => bunReference('decode', f))];
  if (f.name === 'msgpack') refs.push(await started('msgpackr-only', () => bunReference('msgpackr', f)));
  if (f.name === 'lp') {
    refs.push(await started('split-only', () => bunReference('split', f)));
    if (VM) refs.push(await started('VictoriaMetrics', () => victoriaTarget(VM)));
    if (INFLUXD) refs.push(await started('InfluxDB', () => influxTarget(INFLUXD)));
  }
  const svc = await svcTarget(f);
  const base = process.env.BENCH_BASELINE;
  if (base) refs.push(await started('svc (baseline)', () => svcTarget(f, base)));
  const all = [svc, ...refs.filter((t): t is Target => t !== null)];
  try {
    // Warm-up (JIT, VictoriaMetrics' series registration), settled, so the turns pay for their own rows only.
    for (const t of all) await turn(t, f, WARMUP);
    const warm = svc.rows;
    const warmRows = new Map(all.map((t) => [t, t.rows]));
    for (const t of all) Object.assign(t, { acked: [], settled: [], rows: 0, cpu: 0, rss: 0, errors: 0 });
    for (let i = 0; i < TURNS; i++) for (const t of i % 2 === 0 ? all : [...all].reverse()) await turn(t, f);
    const missing = svc.rows - ((await countRows(svc.url)) - warm);
    const baseline = all.find((t) => t.name === 'svc (baseline)');
    const baselineWarm = baseline ? warmRows.get(baseline)! : 0;
    const baselineMissing = baseline ? baseline.rows - ((await countRows(baseline.url)) - baselineWarm) : 0;
    console.log(`\n${f.name}: ${TURNS} alternating turns of ${SECONDS} s (order reversed every other turn), medians of the turns`);
    console.log(`| target | acked | on disk (load + flush) | CPU s per M rows (event loop) | event loop minor faults per M rows | peak RSS | svc / target, acked | svc / target, on disk |`);
    console.log('|---|---:|---:|---:|---:|---:|---|---|');
    for (const t of all) {
      const cpu = t.pid ? `${(t.cpu / (t.rows / 1e6)).toFixed(2)} (${(t.loopCpu / (t.rows / 1e6)).toFixed(3)})` : '-';
      const faults = t.pid ? (t.faults / (t.rows / 1e6)).toFixed(0) : '-';
      const rss = t.pid ? `${(t.rss / 2 ** 20).toFixed(0)} MiB` : '-';
      const vs = t === svc ? ['', ''] : [ratioText(turnRatios(svc.acked, t.acked)), ratioText(turnRatios(svc.settled, t.settled))];
      console.log(`| ${t.name}${t.errors ? ` (errors ${t.errors})` : ''} | ${fmt(median(t.acked))} | ${t.settle ? fmt(median(t.settled)) : '-'} | ${cpu} | ${faults} | ${rss} | ${vs[0]} | ${vs[1]} |`);
    }
    if (missing > 0) console.log(`NOT COUNTED BACK: ${missing} acknowledged rows missing from count(*)`);
    if (baselineMissing > 0) console.log(`NOT COUNTED BACK (baseline): ${baselineMissing} acknowledged rows missing from count(*)`);
    if (baseline) {
      const ref = all.find((t) => t.name === (f.name === 'lp' ? 'VictoriaMetrics' : 'decode-only'));
      const vs = (t: Target, k: 'acked' | 'settled') => (ref ? ratioText(turnRatios(t[k], ref[k])) : '-');
      if (ref) console.log(`same run, vs ${ref.name}: this code acked ${vs(svc, 'acked')}, on disk ${vs(svc, 'settled')}; baseline acked ${vs(baseline, 'acked')}, on disk ${vs(baseline, 'settled')}`);
    }
    const vm = all.find((t) => t.name === 'VictoriaMetrics');
    if (vm) {
      const [ours, theirs] = [svc.cpu / (svc.rows / 1e6), vm.cpu / (vm.rows / 1e6)];
      console.log(`CPU per million lines (server, every thread, turns + their flushes): VictoriaMetrics / svc = ${(theirs / ours).toFixed(2)}x (above 1: svc needs less CPU per line)`);
    }
  } finally {
    for (const t of all) await t.stop();
  }
}

async function main(): Promise<void> {
  console.log(
    `ingest benchmark: ${TURNS} alternating turns of ${SECONDS}s per target after ${WARMUP}s of warm-up each, ${CONCURRENCY} connections, ${navigator.hardwareConcurrency} cores, ` +
      `client ${WRK ? `wrk (${WRK})` : 'fetch loops in this process (wrk not installed)'}${process.env.BENCH_EXECUTABLE ? `, ${process.env.BENCH_EXECUTABLE}` : ''}`,
  );
  if (!VM) console.log('VictoriaMetrics: not installed (victoria-metrics), no comparison in this run');
  if (!INFLUXD) console.log('InfluxDB 1.x: not installed (influxd), no comparison in this run');
  const all: Format[] = [];
  if (FORMATS.includes('msgpack')) {
    const bodies = Array.from({ length: BODIES }, (_, i) => msgpackBody(i));
    all.push({ name: 'msgpack', path: '/api/v1/write/msgpack', headers: { 'content-type': 'application/msgpack', 'x-svc-database': 'bench' }, bodies, dir: bodyDir(bodies), records: MSGPACK_ROWS });
  }
  if (FORMATS.includes('lp')) {
    const bodies = Array.from({ length: BODIES }, (_, i) => lineBody(i));
    all.push({ name: 'lp', path: '/write?db=bench', headers: {}, bodies, dir: bodyDir(bodies), records: LP_LINES });
  }
  try {
    for (const f of all) await runFormat(f);
  } finally {
    for (const f of all) rmSync(f.dir, { recursive: true, force: true });
  }
  console.log('\ngoals: lp on disk >= 1.0x VictoriaMetrics; msgpack >= 0.75x decode-only; peak RSS <= 1.5 GB');
}

await main();

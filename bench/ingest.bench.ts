/**
 * End-to-end ingest benchmark (`bun run bench:ingest`): starts the server, loads it on loopback for a
 * fixed time and prints, per format, acknowledged records/s (2xx answers during the load) and on-disk
 * records/s (rows counted back through SQL after the final flush, divided by the time from the first
 * request until that flush finished: the honest figure, since a server can ack faster than it writes).
 *
 * The load comes from a C client, `wrk` (4 connections, pre-built bodies cycled by a Lua script), when
 * it is installed; otherwise from concurrent `fetch` loops in this process (said in the output). The
 * references run in the same run, on the same bodies, each right after svc:
 * - decode-only: a tiny Bun.serve in a child process that only decompresses and parses with our
 *   parsers, storing nothing (the ceiling for our HTTP stack and parsers);
 * - split-only (line protocol): a Bun.serve that only splits the body on newlines;
 * - VictoriaMetrics' `/write` (`/usr/bin/victoria-metrics`) and InfluxDB 1.x (`influxd`) when installed.
 * The server's peak RSS during the load is sampled from /proc.
 *
 * Shape: time, host (100 values), region (10 values), five float fields. MessagePack: 10,000-row
 * columnar batches; line protocol: 5,000-line batches; BODIES distinct bodies per format, each later
 * than the one before, cycled (wrk cannot restamp bodies, so a long run repeats points: see README).
 * Each format gets a fresh server, so one format's flush backlog never slows the other. Runs repeat
 * `BENCH_REPEATS` times and medians are printed (the machine is shared; single runs are noisy).
 * Env: BENCH_SECONDS (default 10 per run), BENCH_WARMUP (default 3), BENCH_CONCURRENCY (default 4), BENCH_REPEATS (default 1),
 * BENCH_EXECUTABLE (run e.g. dist/svc instead of `bun src/main.ts`), BENCH_FORMATS (msgpack,lp),
 * BENCH_CLIENT (wrk | fetch), BENCH_PROFILE (a directory: the svc server runs with --cpu-prof there).
 */
import { Packr } from 'msgpackr';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decompress, parseLineProtocol, parseMsgpackWrite } from '../src/ingest/index.ts';
import { ADMIN_TOKEN, startServer } from '../tests/helpers/server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** Seconds of load before the measured run, for svc and VictoriaMetrics alike (svc's JIT warms up, VictoriaMetrics registers its series). */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 1);
const FORMATS = (process.env.BENCH_FORMATS ?? 'msgpack,lp').split(',');
const WRK = process.env.BENCH_CLIENT === 'fetch' ? null : Bun.which('wrk');
const VM = Bun.which('victoria-metrics') ?? (existsSync('/usr/bin/victoria-metrics') ? '/usr/bin/victoria-metrics' : null);
const INFLUXD = Bun.which('influxd');
const MSGPACK_ROWS = 10_000;
const LP_LINES = 5_000;
const BODIES = 32;

if (process.argv[2] === '--decode-only-server' || process.argv[2] === '--split-only-server') {
  const splitOnly = process.argv[2] === '--split-only-server';
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

/** The warm-up load; returns the rows it had acknowledged. */
async function warmUp(f: Format, base: string, path: string, headers: Record<string, string>): Promise<number> {
  if (WARMUP <= 0) return 0;
  return (await load(f, base, path, headers, WARMUP)).acked;
}

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function referenceServer(kind: 'decode' | 'split') {
  const child = Bun.spawn([process.execPath, import.meta.path, kind === 'decode' ? '--decode-only-server' : '--split-only-server'], { stdout: 'pipe', stderr: 'inherit' });
  const reader = child.stdout.getReader();
  let out = '';
  while (!/listening (\d+)/.test(out)) out += new TextDecoder().decode((await reader.read()).value);
  return { url: `http://127.0.0.1:${/listening (\d+)/.exec(out)![1]}`, stop: () => child.kill() };
}

async function referenceRate(kind: 'decode' | 'split', f: Format): Promise<number> {
  const ref = await referenceServer(kind);
  try {
    const r = await load(f, ref.url, f.path, {});
    return r.acked / r.seconds;
  } finally {
    ref.stop();
  }
}

/**
 * CPU seconds (user + system, every thread) `pid` has used so far. CPU per row is the figure a shared
 * machine disturbs least: waiting for a core costs wall time, not CPU time.
 */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

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

interface SvcRun {
  acked: number;
  onDisk: number;
  drainSeconds: number;
  errors: number;
  /** Acknowledged rows not found by count(*). */
  missing: number;
  rss: number;
  /** CPU seconds of the server (all threads) per million rows, from the load's start to the end of the final flush. */
  cpuPerMillion: number;
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

/** A fresh svc server under the load, then the final flush and the count back through SQL. */
async function svcRun(f: Format): Promise<SvcRun> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const exe = process.env.BENCH_EXECUTABLE;
  const prof = process.env.BENCH_PROFILE;
  if (prof) mkdirSync(prof, { recursive: true });
  const args = exe ? ['serve'] : prof ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${prof}`, join(import.meta.dir, '..', 'src', 'main.ts')] : undefined;
  const server = await startServer({ dir, executable: exe ?? (prof ? process.execPath : undefined), args, env: { SVC_MEMORY_ENABLED: 'false' } });
  try {
    const warm = await warmUp(f, server.url, f.path, { ...auth, ...f.headers });
    // The warm-up's rows are flushed first, so the measured run pays for its own rows only.
    await (await fetch(`${server.url}/api/v1/write/line-protocol/flush`, { method: 'POST', headers: auth })).arrayBuffer();
    const cpu0 = cpuSeconds(server.proc.pid);
    const [svc, rss] = await peakRss(server.proc.pid, load(f, server.url, f.path, { ...auth, ...f.headers }));
    const drainStart = performance.now();
    const res = await fetch(`${server.url}/api/v1/write/line-protocol/flush`, { method: 'POST', headers: auth });
    await res.arrayBuffer();
    const end = performance.now();
    const cpu = cpuSeconds(server.proc.pid) - cpu0;
    const rows = (await countRows(server.url)) - warm;
    return {
      acked: svc.acked / svc.seconds,
      onDisk: rows / ((end - svc.started) / 1000),
      drainSeconds: (end - drainStart) / 1000,
      errors: svc.errors + (res.status === 200 ? 0 : 1),
      missing: svc.acked - rows,
      rss,
      cpuPerMillion: cpu / (rows / 1e6),
    };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
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

/** A reference's acked rate and its CPU seconds per million rows (load plus its flush). */
interface RefRun {
  rate: number;
  cpuPerMillion: number;
}

/**
 * VictoriaMetrics' InfluxDB `/write` on the same bodies; it answers 204 once lines are in its in-memory
 * buffers. Its CPU is counted until /internal/force_flush has put them into parts.
 */
async function victoriaRun(vm: string, f: Format): Promise<RefRun | null> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-vm-'));
  const port = freePort();
  const child = Bun.spawn([vm, `-storageDataPath=${dir}`, `-httpListenAddr=127.0.0.1:${port}`, '-retentionPeriod=100y', '-loggerLevel=ERROR', '-maxInsertRequestSize=1073741824'], { stdout: 'ignore', stderr: 'inherit' });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`${url}/health`, 200);
    await warmUp(f, url, '/write?db=bench', {});
    await fetch(`${url}/internal/force_flush`);
    const cpu0 = cpuSeconds(child.pid);
    const r = await load(f, url, '/write?db=bench', {});
    await fetch(`${url}/internal/force_flush`);
    const cpu = cpuSeconds(child.pid) - cpu0;
    return r.errors > 0 ? null : { rate: r.acked / r.seconds, cpuPerMillion: cpu / (r.acked / 1e6) };
  } finally {
    child.kill('SIGTERM');
    await child.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** InfluxDB 1.x on loopback: it answers 204 once a batch is in its WAL and cache. */
async function influxRun(influxd: string, f: Format): Promise<number | null> {
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
  try {
    await waitFor(`${url}/ping`, 204);
    await fetch(`${url}/query?q=${encodeURIComponent('CREATE DATABASE bench')}`, { method: 'POST' });
    const r = await load(f, url, '/write?db=bench', {});
    return r.errors > 0 ? null : r.acked / r.seconds;
  } finally {
    child.kill();
    await child.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (r: number) => `${(r / 1e6).toFixed(2)}M`;
const ratio = (a: number, b: number | undefined) => (b ? `${(a / b).toFixed(2)}x` : '-');

/** A reference that could not be driven is reported as failed, not fatal to the run. */
const refused = (name: string) => (e: unknown) => {
  console.log(`  ${name} failed: ${e instanceof Error ? e.message : String(e)}`);
  return null;
};

interface Row {
  svc: SvcRun;
  refs: Record<string, number | null>;
}

async function main(): Promise<void> {
  console.log(
    `ingest benchmark: ${SECONDS}s per run after ${WARMUP}s of warm-up (svc and VictoriaMetrics), ${CONCURRENCY} connections, ${REPEATS} repeat(s), ${navigator.hardwareConcurrency} cores, ` +
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
  const results = new Map<string, Row[]>();
  const vmCpu = new Map<string, number[]>();
  try {
    for (let r = 0; r < REPEATS; r++)
      for (const f of all) {
        const refs: Record<string, number | null> = { 'decode-only': await referenceRate('decode', f) };
        const svc = await svcRun(f);
        if (f.name === 'lp') {
          refs['split-only'] = await referenceRate('split', f);
          if (VM) {
            const vm = await victoriaRun(VM, f).catch(refused('VictoriaMetrics'));
            refs.VictoriaMetrics = vm?.rate ?? null;
            vmCpu.set(f.name, [...(vmCpu.get(f.name) ?? []), vm?.cpuPerMillion ?? NaN]);
          }
          if (INFLUXD) refs['InfluxDB 1.x'] = await influxRun(INFLUXD, f).catch(refused('InfluxDB'));
        }
        results.set(f.name, [...(results.get(f.name) ?? []), { svc, refs }]);
        const refText = Object.entries(refs).map(([k, v]) => `${k} ${v === null ? 'failed' : fmt(v)}`).join('  ');
        console.log(
          `  run ${r + 1} ${f.name.padEnd(7)} acked ${fmt(svc.acked)}  on-disk ${fmt(svc.onDisk)}  drain ${svc.drainSeconds.toFixed(2)}s  CPU ${svc.cpuPerMillion.toFixed(2)} s/M rows  peak RSS ${(svc.rss / 2 ** 20).toFixed(0)} MiB  | ${refText}` +
            (svc.errors ? `  errors ${svc.errors}` : '') +
            (svc.missing > 0 ? `  NOT COUNTED BACK ${svc.missing}` : ''),
        );
      }
  } finally {
    for (const f of all) rmSync(f.dir, { recursive: true, force: true });
  }
  console.log('\nrecords/s (median of runs; svc rows counted back through SQL after the final flush)');
  console.log('| path | svc acked | svc on-disk | peak RSS | reference (same run) | on-disk / reference |');
  console.log('|---|---:|---:|---:|---|---:|');
  for (const f of all) {
    const rows = results.get(f.name)!;
    const [a, d] = [median(rows.map((x) => x.svc.acked)), median(rows.map((x) => x.svc.onDisk))];
    const rss = Math.max(...rows.map((x) => x.svc.rss));
    for (const ref of Object.keys(rows[0]!.refs)) {
      const vals = rows.map((x) => x.refs[ref]).filter((v): v is number => typeof v === 'number');
      const v = vals.length ? median(vals) : undefined;
      console.log(`| ${f.name} | ${fmt(a)} | ${fmt(d)} | ${(rss / 2 ** 20).toFixed(0)} MiB | ${ref} ${v === undefined ? 'failed' : fmt(v)} | ${ratio(d, v)} (acked ${ratio(a, v)}) |`);
    }
  }
  const lp = results.get('lp');
  const vmc = (vmCpu.get('lp') ?? []).filter(Number.isFinite);
  if (lp && vmc.length) {
    const ours = median(lp.map((x) => x.svc.cpuPerMillion));
    const theirs = median(vmc);
    console.log(`\nCPU per million lines (server, every thread, load + final flush; medians): svc ${ours.toFixed(2)} s, VictoriaMetrics ${theirs.toFixed(2)} s: VictoriaMetrics / svc = ${(theirs / ours).toFixed(2)}x (above 1: svc needs less CPU per line)`);
  }
  console.log('goals: lp on-disk >= 1.0x VictoriaMetrics; msgpack >= 0.75x decode-only; peak RSS <= 1.5 GB');
}

await main();

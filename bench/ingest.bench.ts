/**
 * End-to-end ingest benchmark (`bun run bench:ingest`): starts the server, loads it from a bounded
 * concurrent client on loopback for a fixed time, and prints two rates per format: acknowledged
 * records/s (204s during the load) and on-disk records/s (records in registered Parquet files,
 * divided by the time from the first request until the final drain finished: the honest figure,
 * since a server can ack faster than it writes for a while). Next to them: the ceiling of a
 * decode-only HTTP endpoint (a tiny Bun.serve in a child process that only decompresses and parses
 * with our parsers) and InfluxDB 1.x when `influxd` is installed.
 *
 * Shape: time, host (100 values), region (10 values), five float fields. MessagePack: 10,000-row
 * columnar batches, given new times for every request (see restamp); line protocol: 5,000-line batches. Each format gets a fresh server, so one
 * format's flush backlog never slows the other. The ceiling and svc runs alternate, `BENCH_REPEATS`
 * times, and medians are printed (the machine is shared; single runs are noisy).
 * Env: BENCH_SECONDS (default 10 per run), BENCH_CONCURRENCY (default 4), BENCH_REPEATS (default 1),
 * BENCH_EXECUTABLE (run e.g. dist/svc instead of `bun src/main.ts`), BENCH_FORMATS (msgpack,lp).
 */
import { Packr } from 'msgpackr';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decompress, parseLineProtocol, parseMsgpackWrite } from '../src/ingest/index.ts';
import { ADMIN_TOKEN, startServer } from '../tests/helpers/server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 1);
const FORMATS = (process.env.BENCH_FORMATS ?? 'msgpack,lp').split(',');
const MSGPACK_ROWS = 10_000;
const LP_LINES = 5_000;

if (process.argv[2] === '--decode-only-server') {
  // The ceiling: the same HTTP stack and parsers, nothing stored.
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    maxRequestBodySize: 1 << 30,
    async fetch(req) {
      const body = decompress(new Uint8Array(await req.arrayBuffer()), 1 << 30);
      const now = Date.now() * 1000;
      if (new URL(req.url).pathname === '/api/v1/write/msgpack') parseMsgpackWrite(body, { now });
      else parseLineProtocol(body, { precision: 'ns', now });
      return new Response(null, { status: 204 });
    },
  });
  process.stdout.write(`decode-only listening ${server.port}\n`);
  await new Promise(() => {});
}

/** First time of the load: every request's rows get times after it (epoch µs, detected by magnitude). */
const T0_MICROS = (Date.now() - 1000) * 1000;

/** A MessagePack body; `restamp` gives its rows new times. */
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

/**
 * Gives the rows of a MessagePack body from msgpackBody the times of request number `seq`: one
 * microsecond apart, after those of every earlier request. A real client never sends the same
 * points twice; replayed identical points would sort next to each other and make the float
 * columns compressible, which real measurements are not. The `time` array holds float64 values
 * (msgpackr's encoding of integers above 2^32), so it is patched in place.
 */
function restamp(body: Uint8Array, seq: number): void {
  const head = [0xa4, 0x74, 0x69, 0x6d, 0x65, 0xdc, MSGPACK_ROWS >> 8, MSGPACK_ROWS & 0xff];
  let at = body.indexOf(head[0]!);
  while (at >= 0 && !head.every((b, i) => body[at + i] === b)) at = body.indexOf(head[0]!, at + 1);
  if (at < 0) throw new Error('restamp: no time array of the expected length');
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const t0 = T0_MICROS + seq * MSGPACK_ROWS;
  for (let i = 0, o = at + head.length; i < MSGPACK_ROWS; i++, o += 9) view.setFloat64(o + 1, t0 + i);
}

function lineBody(batch: number): Uint8Array {
  const t0 = BigInt(Date.now() - 1000) * 1_000_000n + BigInt(batch) * 1000n;
  const lines: string[] = [];
  for (let i = 0; i < LP_LINES; i++)
    lines.push(
      `cpu,host=host_${i % 100},region=region_${i % 10} usage_user=${(Math.random() * 100).toFixed(3)},usage_system=${(Math.random() * 10).toFixed(3)},` +
        `usage_idle=${(Math.random() * 100).toFixed(3)},io_wait=${Math.random().toFixed(4)},load=${(Math.random() * 4).toFixed(2)} ${t0 + BigInt(i) * 1000n}`,
    );
  return new TextEncoder().encode(lines.join('\n') + '\n');
}

/**
 * Sends bodies round-robin from `CONCURRENCY` loops for SECONDS; returns acknowledged records and the
 * elapsed seconds. With `stamp`, each loop sends its own copies, stamped with the request number first.
 */
async function load(url: string, headers: Record<string, string>, bodies: Uint8Array[], recordsPerBody: number, stamp?: (body: Uint8Array, seq: number) => void) {
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  let acked = 0;
  let errors = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const own = stamp ? bodies.map((b) => b.slice()) : bodies;
      while (performance.now() < deadline) {
        const seq = next++;
        const body = own[seq % own.length]!;
        stamp?.(body, seq);
        const res = await fetch(url, { method: 'POST', headers, body });
        await res.arrayBuffer();
        if (res.status === 204) acked += recordsPerBody;
        else errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { acked, errors, seconds, started, rate: acked / seconds };
}

interface Format {
  name: string;
  path: string;
  headers: Record<string, string>;
  bodies: Uint8Array[];
  records: number;
  target: string;
  /** Restamps a body before each request (see restamp). */
  stamp?: (body: Uint8Array, seq: number) => void;
}

interface Run {
  ceiling: number;
  acked: number;
  onDisk: number;
  drainSeconds: number;
  errors: number;
  missing: number;
}

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function decodeOnlyServer() {
  const child = Bun.spawn([process.execPath, import.meta.path, '--decode-only-server'], { stdout: 'pipe', stderr: 'inherit' });
  const reader = child.stdout.getReader();
  let out = '';
  while (!/listening (\d+)/.test(out)) out += new TextDecoder().decode((await reader.read()).value);
  return { url: `http://127.0.0.1:${/listening (\d+)/.exec(out)![1]}`, stop: () => child.kill() };
}

async function bufferStats(url: string) {
  const res = await fetch(`${url}/api/v1/write/line-protocol/stats`, { headers: auth });
  return ((await res.json()) as { buffer: { records_written: number; flushes: number } }).buffer;
}

/** One ceiling run and one svc run (fresh server) of a format, back to back. */
async function runOnce(f: Format): Promise<Run> {
  const decoder = await decodeOnlyServer();
  const ceiling = await load(`${decoder.url}${f.path}`, {}, f.bodies, f.records, f.stamp);
  decoder.stop();

  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const exe = process.env.BENCH_EXECUTABLE;
  const server = await startServer({ dir, executable: exe, args: exe ? ['serve'] : undefined });
  try {
    const before = (await bufferStats(server.url)).records_written;
    const svc = await load(`${server.url}${f.path}`, { ...auth, ...f.headers }, f.bodies, f.records, f.stamp);
    // The final drain: an explicit flush resolves once every buffered row is in a registered file.
    const drainStart = performance.now();
    const res = await fetch(`${server.url}/api/v1/write/line-protocol/flush`, { method: 'POST', headers: auth });
    await res.arrayBuffer();
    const end = performance.now();
    const written = (await bufferStats(server.url)).records_written - before;
    return {
      ceiling: ceiling.rate,
      acked: svc.rate,
      onDisk: written / ((end - svc.started) / 1000),
      drainSeconds: (end - drainStart) / 1000,
      errors: svc.errors + (res.status === 200 ? 0 : 1),
      missing: svc.acked - written,
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

/**
 * The same line-protocol load against InfluxDB 1.x (Debian's `influxdb`) on loopback: it answers 204
 * once a batch is in its WAL and cache, so its acked rate is its ingest rate.
 */
async function influxRun(f: Format): Promise<number | null> {
  const influxd = Bun.which('influxd');
  if (!influxd) return null;
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
    for (let i = 0; i < 200 && (await fetch(`${url}/ping`).catch(() => null))?.status !== 204; i++) await Bun.sleep(50);
    await fetch(`${url}/query?q=${encodeURIComponent('CREATE DATABASE bench')}`, { method: 'POST' });
    const r = await load(`${url}/write?db=bench`, {}, f.bodies, f.records);
    return r.errors > 0 ? null : r.rate;
  } finally {
    child.kill();
    await child.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (r: number) => `${(r / 1e6).toFixed(2)}M`;
const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(0)}%`;

async function main(): Promise<void> {
  console.log(`ingest benchmark: ${SECONDS}s per run, ${CONCURRENCY} concurrent requests, ${REPEATS} repeat(s), ${navigator.hardwareConcurrency} cores${process.env.BENCH_EXECUTABLE ? `, ${process.env.BENCH_EXECUTABLE}` : ''}`);
  const all: Format[] = [
    {
      name: 'msgpack',
      path: '/api/v1/write/msgpack',
      headers: { 'content-type': 'application/msgpack', 'x-svc-database': 'bench' },
      bodies: Array.from({ length: 8 }, (_, i) => msgpackBody(i)),
      records: MSGPACK_ROWS,
      target: 'target: on-disk >= 3.00M and >= 50% of ceiling',
      stamp: restamp,
    },
    { name: 'lp', path: '/write?db=bench', headers: {}, bodies: Array.from({ length: 8 }, (_, i) => lineBody(i)), records: LP_LINES, target: 'target: on-disk >= 1.00M' },
  ];
  const formats = all.filter((f) => FORMATS.includes(f.name));
  const results = new Map<string, Run[]>();
  for (let r = 0; r < REPEATS; r++)
    for (const f of formats) {
      const run = await runOnce(f);
      results.set(f.name, [...(results.get(f.name) ?? []), run]);
      console.log(
        `  run ${r + 1} ${f.name.padEnd(7)} ceiling ${fmt(run.ceiling)}  acked ${fmt(run.acked)}  on-disk ${fmt(run.onDisk)}  drain ${run.drainSeconds.toFixed(2)}s` +
          (run.errors ? `  errors ${run.errors}` : '') +
          (run.missing ? `  NOT ON DISK ${run.missing}` : ''),
      );
    }
  console.log('\nrecords/s (median)   ceiling   acked    on-disk   acked/ceiling   on-disk/ceiling');
  for (const f of formats) {
    const runs = results.get(f.name)!;
    const [c, a, d] = [median(runs.map((x) => x.ceiling)), median(runs.map((x) => x.acked)), median(runs.map((x) => x.onDisk))];
    console.log(`${f.name.padEnd(20)} ${fmt(c).padStart(7)}  ${fmt(a).padStart(7)}  ${fmt(d).padStart(7)}   ${pct(a, c).padStart(13)}   ${pct(d, c).padStart(15)}   (${f.target})`);
  }
  const lp = formats.find((f) => f.name === 'lp');
  if (!lp || !Bun.which('influxd')) return console.log('InfluxDB 1.x: skipped (influxd not installed, or lp not benchmarked)');
  const influx = await influxRun(lp);
  if (influx === null) return console.log('InfluxDB 1.x: could not be driven (errors during the load)');
  const ours = median(results.get('lp')!.map((x) => x.onDisk));
  console.log(`InfluxDB 1.x line protocol: ${fmt(influx)} lines/s acked; svc on-disk ${fmt(ours)} = ${(ours / influx).toFixed(2)}x InfluxDB (target >= 3x)`);
}

await main();

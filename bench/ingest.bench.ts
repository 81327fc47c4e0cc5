/**
 * End-to-end ingest benchmark (`bun run bench:ingest`): starts the server, loads it from a bounded
 * concurrent client on loopback for a fixed time, and prints records/s, next to the ceiling of a
 * decode-only HTTP endpoint (a tiny Bun.serve in a child process that only decompresses and parses
 * with our parsers) and InfluxDB 1.x when `influxd` is installed.
 *
 * Shape: time, host (100 values), region (10 values), five float fields. MessagePack: 10,000-row
 * columnar batches; line protocol: 5,000-line batches.
 * Env: BENCH_SECONDS (default 10 per run), BENCH_CONCURRENCY (default 4).
 */
import { Packr } from 'msgpackr';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decompress, parseLineProtocol, parseMsgpackWrite } from '../src/ingest/index.ts';
import { startServer } from '../tests/helpers/server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
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

/** One request body per batch; times move forward from batch to batch, all within the current hour. */
function msgpackBody(batch: number): Uint8Array {
  const t0 = (Date.now() - 1000) * 1000 + batch * MSGPACK_ROWS; // epoch µs (detected by magnitude)
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
  const t0 = BigInt(Date.now() - 1000) * 1_000_000n + BigInt(batch) * 1000n;
  const lines: string[] = [];
  for (let i = 0; i < LP_LINES; i++)
    lines.push(
      `cpu,host=host_${i % 100},region=region_${i % 10} usage_user=${(Math.random() * 100).toFixed(3)},usage_system=${(Math.random() * 10).toFixed(3)},` +
        `usage_idle=${(Math.random() * 100).toFixed(3)},io_wait=${Math.random().toFixed(4)},load=${(Math.random() * 4).toFixed(2)} ${t0 + BigInt(i) * 1000n}`,
    );
  return new TextEncoder().encode(lines.join('\n') + '\n');
}

/** Sends bodies round-robin from `CONCURRENCY` loops for SECONDS; returns acknowledged records/s. */
async function load(url: string, headers: Record<string, string>, bodies: Uint8Array[], recordsPerBody: number): Promise<{ rate: number; errors: number }> {
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  let acked = 0;
  let errors = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const res = await fetch(url, { method: 'POST', headers, body: bodies[next++ % bodies.length] });
        await res.arrayBuffer();
        if (res.status === 204) acked += recordsPerBody;
        else errors++;
      }
    }),
  );
  return { rate: acked / ((performance.now() - started) / 1000), errors };
}

const fmt = (r: number) => `${(r / 1e6).toFixed(2)}M rec/s`;

async function main(): Promise<void> {
  console.log(`ingest benchmark: ${SECONDS}s per run, ${CONCURRENCY} concurrent requests, ${navigator.hardwareConcurrency} cores`);
  const msgpackBodies = Array.from({ length: 8 }, (_, i) => msgpackBody(i));
  const lineBodies = Array.from({ length: 8 }, (_, i) => lineBody(i));

  // Decode-only ceiling, in its own process like the real server.
  const child = Bun.spawn([process.execPath, import.meta.path, '--decode-only-server'], { stdout: 'pipe', stderr: 'inherit' });
  const reader = child.stdout.getReader();
  let out = '';
  while (!/listening (\d+)/.test(out)) out += new TextDecoder().decode((await reader.read()).value);
  const decodeUrl = `http://127.0.0.1:${/listening (\d+)/.exec(out)![1]}`;
  const ceilingMsgpack = await load(`${decodeUrl}/api/v1/write/msgpack`, {}, msgpackBodies, MSGPACK_ROWS);
  const ceilingLines = await load(`${decodeUrl}/write`, {}, lineBodies, LP_LINES);
  child.kill();

  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const server = await startServer({ dir });
  try {
    const auth = { authorization: `Bearer ${process.env.SVC_AUTH_BOOTSTRAP_TOKEN ?? 'svc_test_admin_token_0123456789abcdefghijklmnop'}` };
    const mp = await load(`${server.url}/api/v1/write/msgpack`, { ...auth, 'content-type': 'application/msgpack', 'x-svc-database': 'bench' }, msgpackBodies, MSGPACK_ROWS);
    const lp = await load(`${server.url}/write?db=bench`, auth, lineBodies, LP_LINES);
    const flushStart = performance.now();
    await fetch(`${server.url}/api/v1/write/line-protocol/flush`, { method: 'POST', headers: auth });
    const flushTail = (performance.now() - flushStart) / 1000;
    const stats = (await (await fetch(`${server.url}/api/v1/write/msgpack/stats`, { headers: auth })).json()) as { buffer: { records_written: number; flushes: number } };

    console.log('');
    console.log(`MessagePack columnar  svc ${fmt(mp.rate)}   decode-only ${fmt(ceilingMsgpack.rate)}   ratio ${((mp.rate / ceilingMsgpack.rate) * 100).toFixed(0)}%   (target >= 3.00M and >= 50%)${mp.errors ? `   errors ${mp.errors}` : ''}`);
    console.log(`line protocol         svc ${fmt(lp.rate)}   decode-only ${fmt(ceilingLines.rate)}   ratio ${((lp.rate / ceilingLines.rate) * 100).toFixed(0)}%   (target >= 1.00M)${lp.errors ? `   errors ${lp.errors}` : ''}`);
    console.log(`InfluxDB 1.x          ${Bun.which('influxd') ? 'installed, but not driven by this script yet' : 'skipped (influxd not installed)'}`);
    console.log(`written to Parquet    ${stats.buffer.records_written.toLocaleString()} records in ${stats.buffer.flushes} flushes; final flush took ${flushTail.toFixed(2)}s`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

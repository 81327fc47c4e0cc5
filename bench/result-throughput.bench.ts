/**
 * Result throughput (`bun run bench:results`, issue 28): `SELECT * FROM cpu LIMIT 1000000` of the
 * bench:query shape (time, host, region, five full-precision doubles) as Arrow IPC and as JSON, read by
 * a Bun `fetch` client: the whole body, and for Arrow decoded with apache-arrow's `tableFromIPC` to
 * count the rows (the JSON body is read whole, not parsed). References measured in the same run, call
 * by call alternating with the svc side: DuckDB materializing the same result in this process, the
 * decode-only ceiling (`tableFromIPC` over a body already in memory), and two transport ceilings: a
 * bare Bun server in another process streaming as many bytes from reused 256 KiB buffers, and one
 * answering svc's own Arrow body prebuilt in memory (`new Response(bytes)`), each read by the same kind
 * of client with `await res.arrayBuffer()` (on a loaded machine this alone can take most of svc's time).
 *
 * BENCH_BASELINE=<dir>: a second server runs from another checkout's `src/main.ts` (for example the
 * previous version, `git archive main | tar -x -C dir` with node_modules linked) on a copy of the same
 * files, alternating with this one, so before and after come from the same run.
 * Env: BENCH_ROWS (rows generated, default 2000000), BENCH_REPEATS (timed rounds, default 9).
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { DuckDBInstance, type DuckDBConnection } from '../src/duckdb/index.ts';
import { startServer, type TestServer } from '../tests/helpers/server.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 2_000_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 9);
const LIMIT = 1_000_000;
const SQL = `SELECT * FROM cpu LIMIT ${LIMIT}`;
const START = Date.UTC(2024, 0, 1);

/** Writes ROWS rows into one hourly file per 500k rows in the storage layout; returns the paths. */
async function generate(conn: DuckDBConnection, root: string): Promise<string[]> {
  const files = Math.ceil(ROWS / 500_000);
  const paths: string[] = [];
  for (let h = 0; h < files; h++) {
    const hh = String(h).padStart(2, '0');
    const folder = join(root, 'bench', 'cpu', '2024', '01', '01', hh);
    mkdirSync(folder, { recursive: true });
    const file = join(folder, `cpu_20240101_${hh}0000_000000000.parquet`);
    const rows = Math.min(500_000, ROWS - h * 500_000);
    const v = (scale: number) => `random() * ${scale} + 0.5`;
    await conn.run(
      `COPY (SELECT make_timestamp(CAST(${(START + h * 3_600_000) * 1000} + i * 7000 AS BIGINT)) AS time, 'host_' || (i % 100) AS host,
        'region_' || (i % 10) AS region, ${v(100)} AS usage_user, ${v(100)} AS usage_system, ${v(100)} AS usage_idle, ${v(10)} AS io_wait, ${v(4)} AS load
        FROM range(${rows}) r(i) ORDER BY time) TO '${file}' (FORMAT parquet, COMPRESSION snappy)`,
    );
    paths.push(file);
  }
  return paths;
}

async function body(s: TestServer, route: string): Promise<ArrayBuffer> {
  const r = await s.fetch(route, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-database': 'bench' }, body: JSON.stringify({ sql: SQL }) });
  const bytes = await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`${route} ${r.status}: ${new TextDecoder().decode(bytes).slice(0, 300)}`);
  return bytes;
}

/**
 * The svc Arrow body read chunk by chunk into one preallocated buffer, then decoded: the client side of
 * the same stream without `arrayBuffer()`, whose accumulation of a chunked body costs Bun's fetch client
 * ~10x the CPU of reading it this way (measured: 71 MB, 1.09 s vs 0.11 s; 0.42 s when the length is known,
 * as it is for svc's bodies within query.whole_body_memory).
 */
async function readInPieces(s: TestServer, route: string, size: number): Promise<number> {
  const r = await s.fetch(route, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-database': 'bench' }, body: JSON.stringify({ sql: SQL }) });
  if (r.status !== 200 || !r.body) throw new Error(`${route} ${r.status}`);
  // Record batch boundaries (and so the padding) vary a little from run to run: room to spare, grown if ever short.
  let out = new Uint8Array(Math.ceil(size * 1.05));
  let at = 0;
  for await (const piece of r.body) {
    if (at + piece.byteLength > out.length) {
      const grown = new Uint8Array(2 * (at + piece.byteLength));
      grown.set(out.subarray(0, at));
      out = grown;
    }
    out.set(piece, at);
    at += piece.byteLength;
  }
  return arrowRows(out.subarray(0, at));
}

/** Rows of an Arrow IPC stream, decoded by apache-arrow. */
function arrowRows(bytes: ArrayBuffer | Uint8Array): number {
  const rows = tableFromIPC(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).numRows;
  if (rows !== LIMIT) throw new Error(`Arrow body has ${rows} rows, expected ${LIMIT}`);
  return rows;
}

/** A bare Bun server (child process) running `code` (which prints `port=N`); resolves with its URL and a stop. */
async function bareServer(code: string): Promise<{ url: string; stop: () => void }> {
  const proc = Bun.spawn([process.execPath, '-e', code], { stdout: 'pipe', stderr: 'inherit' });
  const reader = proc.stdout.getReader();
  let out = '';
  while (!/port=(\d+)/.test(out)) {
    const got = await reader.read();
    if (got.done) throw new Error('the transport ceiling server did not start');
    out += new TextDecoder().decode(got.value);
  }
  return { url: `http://127.0.0.1:${/port=(\d+)/.exec(out)![1]}/`, stop: () => proc.kill() };
}

/** The streaming transport ceiling: `bytes` bytes from reused 256 KiB buffers. */
const streamingCeiling = (bytes: number) =>
  bareServer(`const PART = 256 << 10; const N = Math.ceil(${bytes} / PART); const pool = Array.from({ length: 16 }, () => new Uint8Array(PART).fill(1));
const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch() { let i = 0;
  return new Response(new ReadableStream({ pull(c) { for (let k = 0; k < 8 && i < N; k++, i++) c.enqueue(pool[i % 16]); if (i >= N) c.close(); } }, { highWaterMark: 2 << 20, size: (p) => p.byteLength })); } });
console.log('port=' + s.port);`);

/** The prebuilt transport ceiling: the file at `path` (svc's Arrow body) held in memory and answered whole. */
const prebuiltCeiling = (path: string) =>
  bareServer(`const body = new Uint8Array(await Bun.file(${JSON.stringify(path)}).arrayBuffer());
const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(body, { headers: { 'content-type': 'application/vnd.apache.arrow.stream' } }) });
console.log('port=' + s.port);`);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-results-bench-'));
  const root = join(dir, 'data', 'svc');
  const duck = await DuckDBInstance.create(':memory:');
  const conn = await duck.connect();
  const servers: { name: string; s: TestServer; dir: string }[] = [];
  const stops: (() => void)[] = [];
  try {
    const files = await generate(conn, root);
    await conn.run('SET preserve_insertion_order = false');
    await conn.run(`CREATE VIEW cpu AS SELECT * FROM read_parquet([${files.map((f) => `'${f}'`).join(', ')}])`);
    servers.push({ name: 'svc', s: await startServer({ dir, env: { SVC_QUERY_TIMEOUT: '600s' } }), dir });
    const baseline = process.env.BENCH_BASELINE;
    if (baseline) {
      const baseDir = mkdtempSync(join(tmpdir(), 'svc-results-bench-base-'));
      cpSync(join(root, 'bench'), join(baseDir, 'data', 'svc', 'bench'), { recursive: true });
      const s = await startServer({ dir: baseDir, executable: process.execPath, args: [join(baseline, 'src', 'main.ts')], env: { SVC_QUERY_TIMEOUT: '600s' } });
      servers.push({ name: 'baseline', s, dir: baseDir });
    }
    const sample = await body(servers[0]!.s, '/api/v1/query/arrow');
    const cases: { name: string; fn: () => Promise<number> }[] = [];
    for (const { name, s } of servers) {
      cases.push({ name: `${name} Arrow (fetch + tableFromIPC)`, fn: async () => arrowRows(await body(s, '/api/v1/query/arrow')) });
      cases.push({ name: `${name} JSON (fetch, body read whole)`, fn: async () => (await body(s, '/api/v1/query')).byteLength });
      cases.push({ name: `${name} Arrow (fetch, body read in pieces + tableFromIPC)`, fn: () => readInPieces(s, '/api/v1/query/arrow', sample.byteLength) });
    }
    const bare = await streamingCeiling(sample.byteLength);
    stops.push(bare.stop);
    cases.push({ name: 'reference: bare Bun server streaming the same byte count, fetch', fn: async () => (await (await fetch(bare.url)).arrayBuffer()).byteLength });
    const samplePath = join(dir, 'sample.arrow');
    await Bun.write(samplePath, sample);
    const prebuilt = await prebuiltCeiling(samplePath);
    stops.push(prebuilt.stop);
    cases.push({ name: "reference: bare Bun server answering svc's Arrow body prebuilt, fetch + tableFromIPC", fn: async () => arrowRows(await (await fetch(prebuilt.url)).arrayBuffer()) });
    cases.push({ name: 'reference: tableFromIPC of the body in memory', fn: async () => arrowRows(sample) });
    cases.push({
      name: 'reference: DuckDB direct materialization',
      fn: async () => {
        const res = await conn.run(SQL);
        let rows = 0;
        for (let i = 0; i < res.chunkCount; i++) rows += res.getChunk(i).rowCount;
        return rows;
      },
    });
    const times = cases.map(() => [] as number[]);
    // Two warm-up rounds (JIT on both sides), then rounds in which every case runs once, in turn, so
    // the machine's drift falls on all alike; every other round runs them in reverse, so no case always
    // follows the same one (an A/A run showed a 1.5x bias by position alone).
    for (let r = 0; r < REPEATS + 2; r++) {
      const order = [...cases.entries()];
      if (r % 2 === 1) order.reverse();
      for (const [i, c] of order) {
        Bun.gc(true);
        const t0 = performance.now();
        await c.fn();
        if (r >= 2) times[i]!.push(performance.now() - t0);
      }
    }
    const ref = median(times[0]!);
    const lines = ['| case | median ms | rows/s | svc Arrow ms / this |', '|---|---:|---:|---:|'];
    for (const [i, c] of cases.entries()) {
      const ms = median(times[i]!);
      lines.push(`| ${c.name} | ${ms.toFixed(1)} | ${((LIMIT / ms) * 1000 / 1e6).toFixed(2)}M | ${(ref / ms).toFixed(2)} |`);
    }
    process.stdout.write(`\nresult throughput: ${SQL} over ${ROWS.toLocaleString()} rows, ${sample.byteLength.toLocaleString()} Arrow bytes; medians of ${REPEATS} rounds\n\n${lines.join('\n')}\n`);
  } finally {
    for (const stop of stops) stop();
    for (const { s, dir: d } of servers) {
      await s.cleanup();
      rmSync(d, { recursive: true, force: true });
    }
    conn.closeSync();
  }
}

await main();

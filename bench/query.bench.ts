/**
 * Query benchmark (`bun run bench:query`): N rows (default 10M) of the ingest-bench shape (time,
 * host of 100, region of 10, five float fields) over 24 hours, one Parquet file per hour written by
 * DuckDB straight into the storage layout; the server registers them at start-up (manifest
 * reconcile). Each query runs through the HTTP API and, side by side, in DuckDB directly over the
 * same 24 files in this process; medians after a warm-up (at least BENCH_REPEATS runs, see timePair) are printed.
 * Env: BENCH_ROWS (default 10000000), BENCH_REPEATS (default 5), BENCH_VALUES (`random`: full
 * precision like the ingest bench, default; `rounded`: two decimals, like typical metrics),
 * BENCH_ONLY (run only the cases whose name contains it), BENCH_ENCODER_ROWS (rows of the native vs
 * TypeScript encoder cases, default 500000), BENCH_RBAC=1 (svc side with an ordinary token in 3 teams
 * with 20 roles, see rbac-setup.ts, instead of the admin token).
 *
 * Native vs TypeScript (issue 21): each result format encoded in this process from one materialized
 * result, with every native routine on, with only the result reader on (the JSON writer off), and
 * with none (`query.native_encoders = false`); the ratios say what each routine gains. A routine stays
 * native only where it gains at least 15% (README, "Native encoders").
 *
 * The last column of the query table is the cost of query management and governance: the same query
 * on a second server with both switched off.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, resultChunks, type DuckDBConnection } from '../src/duckdb/index.ts';
import { configureNative } from '../src/native/index.ts';
import { ArrowEncoder } from '../src/query/encode/arrow-encoder.ts';
import { JsonEncoder } from '../src/query/encode/json-encoder.ts';
import { renderFloatsAsJson } from '../src/query/encode/json-render.ts';
import { MsgpackEncoder } from '../src/query/encode/msgpack-encoder.ts';
import { resultColumns } from '../src/query/encode/result.ts';
import { startServer, type TestServer } from '../tests/helpers/server.ts';
import { narrowedToken } from './rbac-setup.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const ROUNDED = process.env.BENCH_VALUES === 'rounded';
const START = Date.UTC(2024, 0, 1);
const HOUR_US = 3_600_000_000;
const pad = (n: number) => String(n).padStart(2, '0');

/** Writes 24 hourly files; returns their absolute paths. */
async function generate(conn: DuckDBConnection, root: string): Promise<string[]> {
  const perHour = Math.ceil(ROWS / 24);
  const step = HOUR_US / perHour;
  const v = (scale: number) => (ROUNDED ? `round(random() * ${scale}, 2)` : `random() * ${scale} + 0.5`);
  const paths: string[] = [];
  for (let h = 0; h < 24; h++) {
    const d = new Date(START + h * 3_600_000);
    const folder = join(root, 'bench', 'cpu', String(d.getUTCFullYear()), pad(d.getUTCMonth() + 1), pad(d.getUTCDate()), pad(d.getUTCHours()));
    mkdirSync(folder, { recursive: true });
    const file = join(folder, `cpu_${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}_${pad(d.getUTCHours())}0000_000000000.parquet`);
    const rows = Math.min(perHour, ROWS - h * perHour);
    await conn.run(
      `COPY (SELECT make_timestamp(CAST(${(START + h * 3_600_000) * 1000} + floor(i * ${step}) AS BIGINT)) AS time, 'host_' || (i % 100) AS host,
        'region_' || (i % 10) AS region, ${v(100)} AS usage_user, ${v(100)} AS usage_system, ${v(100)} AS usage_idle, ${v(10)} AS io_wait, ${v(4)} AS load
        FROM range(${rows}) r(i) ORDER BY time) TO '${file}' (FORMAT parquet, COMPRESSION snappy)`,
    );
    paths.push(file);
  }
  return paths;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Warm-up calls before timing, on both sides: up to this many, stopping once a second is spent. */
const WARMUP_CALLS = 20;
const WARMUP_MS = 1000;
/** Ratio cases: time spent on pairs beyond the first REPEATS, and the most pairs timed. */
const RATIO_MS = 4000;
const MAX_PAIRS = 201;

/**
 * Times both sides of one case. For a ratio the calls alternate (svc, direct, svc, ...), so the
 * machine's drift over a run (frequency, caches, other processes) falls on both alike instead of on
 * whichever side ran later. For a throughput target (`alone`) each side runs as a block: a million-row
 * result leaves garbage in this process (the direct side's chunks hold DuckDB memory until
 * collected), and sweeping it must not land in the other side's calls.
 */
async function timePair(
  svcFn: () => Promise<number>,
  rawFn: () => Promise<number>,
  alone: boolean,
  offFn: () => Promise<number>,
): Promise<{ svc: { ms: number; rows: number }; raw: { ms: number }; off: { ms: number }; pairs: number }> {
  // The server's query path is JavaScript: its first dozen or so calls run before the JIT has compiled
  // it (a fresh server answers count(*) in 3-7 ms, then 1.6-2.4 ms), and a steady state is what the
  // ratio is about. DuckDB direct is native code and gets the same warm-up.
  const warm = async (fn: () => Promise<number>) => {
    const w0 = performance.now();
    for (let i = 0; i < WARMUP_CALLS && (i === 0 || performance.now() - w0 < WARMUP_MS); i++) await fn();
  };
  const timed = async (fn: () => Promise<number>, into: number[]) => {
    const t0 = performance.now();
    const rows = await fn();
    into.push(performance.now() - t0);
    return rows;
  };
  const svc: number[] = [];
  const raw: number[] = [];
  const off: number[] = [];
  let rows = 0;
  if (alone) {
    await warm(svcFn);
    for (let i = 0; i < REPEATS; i++) rows = await timed(svcFn, svc);
    await warm(offFn);
    for (let i = 0; i < REPEATS; i++) await timed(offFn, off);
    await warm(rawFn);
    for (let i = 0; i < REPEATS; i++) await timed(rawFn, raw);
  } else {
    await warm(svcFn);
    await warm(offFn);
    await warm(rawFn);
    // A ratio of two short calls is noisy (a 20 ms query varies by a millisecond from call to call):
    // pairs continue past REPEATS until RATIO_MS is spent, so a fast query's median rests on a hundred
    // pairs or so instead of a handful.
    const t0 = performance.now();
    for (let i = 0; i < REPEATS || (performance.now() - t0 < RATIO_MS && i < MAX_PAIRS); i++) {
      rows = await timed(svcFn, svc);
      await timed(offFn, off);
      await timed(rawFn, raw);
    }
  }
  return { svc: { ms: median(svc), rows }, raw: { ms: median(raw) }, off: { ms: median(off) }, pairs: svc.length };
}

async function viaHttp(s: TestServer, route: string, sql: string, token?: string): Promise<number> {
  const r = await s.fetch(route, { method: 'POST', token, headers: { 'content-type': 'application/json', 'x-svc-database': 'bench' }, body: JSON.stringify({ sql }) });
  const bytes = await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`${route} ${r.status}: ${new TextDecoder().decode(bytes).slice(0, 300)}`);
  return bytes.byteLength;
}

async function direct(conn: DuckDBConnection, sql: string): Promise<number> {
  const res = await conn.run(sql);
  let rows = 0;
  for (let i = 0; i < res.chunkCount; i++) rows += res.getChunk(i).rowCount;
  return rows;
}

const ENCODER_ROWS = Number(process.env.BENCH_ENCODER_ROWS ?? 500_000);
/** Native settings compared: every routine, the result reader alone, none. */
const NATIVE_MODES = [
  { name: 'native', enabled: true, off: [] },
  { name: 'reader only', enabled: true, off: ['JSON writer'] },
  { name: 'TypeScript', enabled: false, off: [] },
] as const;

/** Encodes `sql`'s result as `format` once; returns the milliseconds of reading and encoding (not of running the query). */
async function encodeOnce(conn: DuckDBConnection, sql: string, format: 'json' | 'arrow' | 'msgpack'): Promise<number> {
  let text = sql;
  if (format === 'json') {
    // As the server does: DuckDB renders the doubles (json-render.ts).
    const probe = await conn.run(`SELECT * FROM (${sql}) LIMIT 0`);
    const columns = resultColumns(probe.columnNames(), probe.columnTypes());
    const rendered = renderFloatsAsJson(columns);
    if (rendered) text = `SELECT ${rendered.select} FROM (${sql}) AS q(${columns.map((_, i) => `c${i}`).join(', ')})`;
  }
  const res = await conn.run(text);
  const columns = resultColumns(res.columnNames(), res.columnTypes());
  const t0 = performance.now();
  const chunks = resultChunks(res, columns.length);
  if (format === 'json') {
    const enc = new JsonEncoder(columns);
    for (let i = 0; i < chunks.count; i++) await enc.add(chunks.chunk(i));
    await enc.finish({ executionTimeMs: 0 });
  } else {
    const enc = format === 'arrow' ? new ArrowEncoder(columns) : new MsgpackEncoder(columns);
    for (let i = 0; i < chunks.count; i++) enc.add(chunks.chunk(i));
    enc.finish({ executionTimeMs: 0 });
  }
  chunks.close();
  return performance.now() - t0;
}

/** The native vs TypeScript table: median encode time per mode, modes alternating call by call. */
async function nativeVsTypescript(conn: DuckDBConnection): Promise<string[]> {
  const n = ENCODER_ROWS;
  const cases = [
    { name: `JSON, cpu shape (${n} rows)`, sql: `SELECT * FROM cpu LIMIT ${n}`, format: 'json' as const },
    { name: `JSON, strings and times (${n} rows)`, sql: `SELECT time, host, region, CASE WHEN hour(time) % 3 = 0 THEN NULL ELSE host || ' in ' || region || ', a longer label' END AS label FROM cpu LIMIT ${n}`, format: 'json' as const },
    { name: `Arrow, cpu shape (${n} rows)`, sql: `SELECT * FROM cpu LIMIT ${n}`, format: 'arrow' as const },
    { name: `MessagePack, cpu shape (${n} rows)`, sql: `SELECT * FROM cpu LIMIT ${n}`, format: 'msgpack' as const },
  ];
  const lines = ['| encoder case | native ms | reader only ms | TypeScript ms | TypeScript / native | TypeScript / reader only | runs |', '|---|---:|---:|---:|---:|---:|---:|'];
  for (const c of cases.filter((x) => !process.env.BENCH_ONLY || x.name.includes(process.env.BENCH_ONLY))) {
    const times: number[][] = NATIVE_MODES.map(() => []);
    for (let r = 0; r < REPEATS + 2; r++) {
      for (const [m, mode] of NATIVE_MODES.entries()) {
        configureNative({ enabled: mode.enabled, off: mode.off });
        const ms = await encodeOnce(conn, c.sql, c.format);
        // The first two rounds warm the JIT and the caches.
        if (r >= 2) times[m]!.push(ms);
      }
    }
    configureNative({ enabled: true });
    const [nat, reader, ts] = times.map(median) as [number, number, number];
    lines.push(`| ${c.name} | ${nat.toFixed(1)} | ${reader.toFixed(1)} | ${ts.toFixed(1)} | ${(ts / nat).toFixed(2)}x | ${(ts / reader).toFixed(2)}x | ${REPEATS} |`);
    process.stderr.write(`${lines[lines.length - 1]}\n`);
  }
  return lines;
}

/** A non-admin token bound by a policy with every limit set far out of reach but the row cap. */
async function governedToken(s: TestServer): Promise<string> {
  const post = async (path: string, body: unknown) => {
    const r = await s.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (r.status !== 201) throw new Error(`${path} ${r.status}: ${await r.text()}`);
    return (await r.json()) as { id: string; token: string };
  };
  const t = await post('/api/v1/auth/tokens', { name: 'bench-governed', permissions: ['read'] });
  const big = 1_000_000_000;
  await post('/api/v1/governance/policies', {
    token_id: t.id, rate_limit_per_minute: big, rate_limit_per_hour: big, max_queries_per_day: big, max_concurrent_queries: 1000, max_scan_duration_seconds: 3600,
  });
  return t.token;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-query-bench-'));
  const root = join(dir, 'data', 'svc');
  const duck = await DuckDBInstance.create(':memory:');
  const conn = await duck.connect();
  let s: TestServer | null = null;
  let off: TestServer | null = null;
  let offDir: string | null = null;
  try {
    const g0 = performance.now();
    const files = await generate(conn, root);
    const genSec = (performance.now() - g0) / 1000;
    // The server's setting (duckdb/sandbox.ts): both sides run the same engine configuration.
    await conn.run('SET preserve_insertion_order = false');
    await conn.run(`CREATE VIEW cpu AS SELECT * FROM read_parquet([${files.map((f) => `'${f}'`).join(', ')}])`);
    s = await startServer({ dir, env: { SVC_QUERY_TIMEOUT: '600s' } });
    // The svc side runs as a non-admin token: bound by a governance policy whose limits never trigger
    // (every one checked per query; no row cap, which would add a LIMIT), or with BENCH_RBAC=1 one in
    // 3 teams with 20 roles. A second server on the same files runs with query management and governance off.
    const governed = process.env.BENCH_RBAC === '1' ? await narrowedToken(s, 'bench-narrowed') : await governedToken(s);
    offDir = mkdtempSync(join(tmpdir(), 'svc-query-bench-off-'));
    // A copy of the files (the storage lock allows one server per storage), rebuilt into its manifest at start.
    cpSync(join(root, 'bench'), join(offDir, 'data', 'svc', 'bench'), { recursive: true });
    off = await startServer({ dir: offDir, env: { SVC_QUERY_TIMEOUT: '600s', SVC_QUERY_MANAGEMENT_ENABLED: 'false', SVC_GOVERNANCE_ENABLED: 'false' } });
    const end = new Date(START + 24 * 3_600_000).toISOString().replace('T', ' ').replace('Z', '');
    const lastHour = new Date(START + 23 * 3_600_000).toISOString().replace('T', ' ').replace('Z', '');
    const cases: { name: string; sql: string; route?: string; rows?: number; target: string }[] = [
      { name: 'count(*)', sql: 'SELECT count(*) FROM cpu', target: '<= 1.1x' },
      { name: 'GROUP BY host avg', sql: 'SELECT host, avg(usage_user) AS u FROM cpu GROUP BY host', target: '<= 1.1x' },
      { name: 'time_bucket 1 min, 24 h', sql: 'SELECT time_bucket(INTERVAL 1 MINUTE, time) AS t, avg(usage_user) AS u FROM cpu GROUP BY t ORDER BY t', target: '<= 1.1x' },
      { name: 'last hour by host', sql: `SELECT host, avg(usage_user) AS u, max(load) AS l FROM cpu WHERE time >= '${lastHour}' AND time < '${end}' GROUP BY host`, target: '<= 1.1x' },
      { name: 'LIMIT 1M json', sql: 'SELECT * FROM cpu LIMIT 1000000', route: '/api/v1/query', rows: 1_000_000, target: '>= 3M rows/s' },
      { name: 'LIMIT 1M arrow', sql: 'SELECT * FROM cpu LIMIT 1000000', route: '/api/v1/query/arrow', rows: 1_000_000, target: '>= 10M rows/s' },
      { name: 'LIMIT 1M msgpack', sql: 'SELECT * FROM cpu LIMIT 1000000', route: '/api/v1/query/msgpack', rows: 1_000_000, target: '-' },
      { name: 'ORDER BY time DESC LIMIT 1000', sql: 'SELECT * FROM cpu ORDER BY time DESC LIMIT 1000', target: '<= 40 ms' },
    ];
    const lines: string[] = [];
    const head = `| query | svc HTTP ms | DuckDB direct ms | ratio | svc rows/s | runs | target | registry + governance |`;
    lines.push(head, '|---|---:|---:|---:|---:|---:|---|---:|');
    for (const c of cases.filter((x) => !process.env.BENCH_ONLY || x.name.includes(process.env.BENCH_ONLY))) {
      const { svc, raw, off: ungated, pairs } = await timePair(
        () => viaHttp(s!, c.route ?? '/api/v1/query', c.sql, governed),
        () => direct(conn, c.sql),
        c.rows !== undefined,
        () => viaHttp(off!, c.route ?? '/api/v1/query', c.sql),
      );
      const rate = c.rows ? `${((c.rows / svc.ms) * 1000 / 1e6).toFixed(2)}M` : '';
      // How much the ratio moves with the features on: (governed - off) / off (target: within 2%).
      const gate = `${(((svc.ms - ungated.ms) / ungated.ms) * 100).toFixed(1)}% (${(svc.ms - ungated.ms).toFixed(2)} ms)`;
      lines.push(`| ${c.name} | ${svc.ms.toFixed(1)} | ${raw.ms.toFixed(1)} | ${(svc.ms / raw.ms).toFixed(2)}x | ${rate} | ${pairs} | ${c.target} | ${gate} |`);
      process.stderr.write(`${lines[lines.length - 1]}\n`);
    }
    const native = await nativeVsTypescript(conn);
    process.stdout.write(`\nquery bench${process.env.BENCH_RBAC === '1' ? ' (token in 3 teams with 20 roles)' : ' (token under a governance policy)'}: ${ROWS.toLocaleString()} rows, 24 files (${ROUNDED ? 'two-decimal' : 'full-precision random'} floats), generated in ${genSec.toFixed(1)} s; medians (runs: timed calls per side, alternating for ratios)\n\n${lines.join('\n')}\n`);
    process.stdout.write(`\nnative vs TypeScript encoders, in this process (encode only, medians):\n\n${native.join('\n')}\n`);
  } finally {
    await off?.cleanup();
    if (offDir) rmSync(offDir, { recursive: true, force: true });
    await s?.cleanup();
    conn.closeSync();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

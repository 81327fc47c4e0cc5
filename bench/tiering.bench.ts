/**
 * Tiering benchmark (`bun run bench:tiering`): the same query over cold data (cold tier on s3rver,
 * read cache warm) and over hot data (local disk), on one server in one run, turns alternating.
 * Two databases hold the same BENCH_ROWS rows (default 2M) in 24 hourly files; `colddb` is migrated
 * to cold, `hotdb` stays hot. Goal: cold with a warm cache at most 1.2x hot (issue 26).
 * Env: BENCH_ROWS, BENCH_REPEATS (pairs per query, default 15), BENCH_REVALIDATE (tiering.cold_cache_revalidate,
 * default its default `1h`; `0s`: a HEAD per cold file per query).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '../src/duckdb/index.ts';
import { startS3rver } from '../tests/helpers/s3rver.ts';
import { json, startServer, type TestServer } from '../tests/helpers/server.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 2_000_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 15);
const REVALIDATE = process.env.BENCH_REVALIDATE ?? '1h';
const START = Date.UTC(2024, 0, 1);
const pad = (n: number) => String(n).padStart(2, '0');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Writes 24 hourly files of `db.cpu` into the storage layout under `root`. */
async function generate(conn: DuckDBConnection, root: string, db: string): Promise<void> {
  const perHour = Math.ceil(ROWS / 24);
  for (let h = 0; h < 24; h++) {
    const d = new Date(START + h * 3_600_000);
    const folder = join(root, db, 'cpu', String(d.getUTCFullYear()), pad(d.getUTCMonth() + 1), pad(d.getUTCDate()), pad(d.getUTCHours()));
    mkdirSync(folder, { recursive: true });
    const file = join(folder, `cpu_${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}_${pad(d.getUTCHours())}0000_000000000.parquet`);
    await conn.run(
      `COPY (SELECT make_timestamp(CAST(${(START + h * 3_600_000) * 1000} + floor(i * ${3_600_000_000 / perHour}) AS BIGINT)) AS time,
        'host_' || (i % 100) AS host, hash(i + ${h}) % 1000 / 10.0 AS usage, hash(i * 7 + ${h}) % 100 / 10.0 AS io_wait
        FROM range(${perHour}) r(i) ORDER BY time) TO '${file}' (FORMAT parquet, COMPRESSION snappy)`,
    );
  }
}

const QUERIES: [string, string][] = [
  ['count(*)', 'SELECT count(*) FROM DB.cpu'],
  ['avg by host, 1 day', 'SELECT host, avg(usage) FROM DB.cpu GROUP BY host ORDER BY host'],
  ['2-hour range', `SELECT time_bucket(INTERVAL 5 MINUTE, time) AS b, max(usage) FROM DB.cpu WHERE time >= '2024-01-01 10:00:00' AND time < '2024-01-01 12:00:00' GROUP BY b ORDER BY b`],
  ['last 100 rows', 'SELECT * FROM DB.cpu ORDER BY time DESC LIMIT 100'],
];

async function timed(s: TestServer, sql: string): Promise<number> {
  const t = performance.now();
  const r = await json(s, 'POST', '/api/v1/query', { sql });
  if (r.status !== 200) throw new Error(`query failed: ${r.status} ${JSON.stringify(r.body)}`);
  return performance.now() - t;
}

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-tiering-'));
const s3 = await startS3rver(['cold']);
let server: TestServer | null = null;
try {
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const root = join(dir, 'data', 'svc');
  await generate(duck, root, 'hotdb');
  await generate(duck, root, 'colddb');
  const cold = Object.fromEntries(Object.entries(s3.env('cold', 'bench')).map(([k, v]) => [k.replace('SVC_STORAGE_', 'SVC_TIERING_COLD_'), v]));
  server = await startServer({ dir, env: { ...cold, SVC_TIERING_ENABLED: 'true', SVC_TIERING_COLD_CACHE_REVALIDATE: REVALIDATE, SVC_COMPACTION_ENABLED: 'false' } });
  const started = await json(server, 'POST', '/api/v1/tiering/migrate', { database: 'colddb', older_than_days: 0, dry_run: false });
  if (started.status !== 202) throw new Error(`migrate: ${started.status} ${JSON.stringify(started.body)}`);
  for (;;) {
    const job = (await json(server, 'GET', `/api/v1/tiering/jobs/${started.body.job_id}`)).body;
    if (job.status === 'completed') break;
    if (job.status !== 'running') throw new Error(`migration ${job.status}: ${job.error}`);
    await Bun.sleep(100);
  }
  const stats = (await json(server, 'GET', '/api/v1/tiering/stats')).body;
  console.log(`tiering bench: ${ROWS} rows x 2 databases, 24 files each; cold ${stats.cold.files} files on s3rver, hot ${stats.hot.files} on local disk; cache_revalidate ${REVALIDATE}; ${REPEATS} alternating pairs per query (medians, ms)`);
  console.log('| query | hot ms | cold (warm cache) ms | cold / hot |');
  console.log('|---|---:|---:|---:|');
  for (const [name, sql] of QUERIES) {
    const hot = sql.replace('DB', 'hotdb');
    const coldSql = sql.replace('DB', 'colddb');
    // Warm-up: fills the read cache and DuckDB's caches on both sides.
    for (let i = 0; i < 3; i++) {
      await timed(server, hot);
      await timed(server, coldSql);
    }
    const h: number[] = [];
    const c: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      if (i % 2 === 0) {
        h.push(await timed(server, hot));
        c.push(await timed(server, coldSql));
      } else {
        c.push(await timed(server, coldSql));
        h.push(await timed(server, hot));
      }
    }
    const [mh, mc] = [median(h), median(c)];
    console.log(`| ${name} | ${mh.toFixed(1)} | ${mc.toFixed(1)} | ${(mc / mh).toFixed(2)}x |`);
  }
} finally {
  await server?.stop();
  await s3.close();
  rmSync(dir, { recursive: true, force: true });
}

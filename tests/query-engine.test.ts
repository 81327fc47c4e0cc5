/**
 * The query engine against real Parquet files and a real (sandboxed) DuckDB, without HTTP: rewrite
 * semantics (results equal plain DuckDB over the same data), pruning equivalence, the guard's
 * hostile-query table, the sandbox as a second wall, timeouts and cancellation.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConnectionPool, DuckDBInstance, createSandboxedInstance, type DuckDBConnection } from '../src/duckdb/index.ts';
import type { ColumnBatch } from '../src/ingest/index.ts';
import { AppError } from '../src/lib/errors.ts';
import { JsonEncoder, QueryService, type SourceFile, type TableSource } from '../src/query/index.ts';
import { CANARY, HOSTILE_QUERIES } from './helpers/hostile-queries.ts';
import { UNRESTRICTED } from '../src/lib/table-access.ts';

const H = 3_600_000_000; // one hour in µs
const T0 = Date.UTC(2024, 0, 1) * 1000;
let dir: string;
let root: string;
let canary: string;
let plain: DuckDBConnection;
let service: QueryService;
let slowService: QueryService;
const files = new Map<string, SourceFile[]>();
const buffered = new Map<string, ColumnBatch[]>();

const source = (): TableSource => ({
  root,
  files: (db, m, lo, hi) => (files.get(`${db}.${m}`) ?? []).filter((f) => f.maxTime >= (lo ?? -Infinity) && f.minTime <= (hi ?? Infinity)),
  buffered: (db, m) => buffered.get(`${db}.${m}`) ?? [],
  // Keys here are absolute paths of files the test writes; nothing compacts or deletes them.
  lease: () => () => {},
  localPaths: async (keys) => [...keys],
  databases: () => ['db1', 'db2'],
  measurements: () => [...files.keys()].map((k) => ({ database: k.split('.')[0]!, measurement: k.split('.')[1]! })),
});

/** Writes `hours` hourly files of one row per minute for db.m and registers them. */
async function writeHours(db: string, m: string, hours: number, valueSql: string): Promise<void> {
  mkdirSync(join(root, db, m), { recursive: true });
  for (let h = 0; h < hours; h++) {
    const path = join(root, db, m, `h${h}.parquet`);
    await plain.run(
      `COPY (SELECT make_timestamp(${T0 + h * H} + i * 60000000) AS time, 'host_' || (i % 3) AS host, ${valueSql} AS usage FROM range(60) r(i)) TO '${path}'`,
    );
    const list = files.get(`${db}.${m}`) ?? [];
    list.push({ key: path, minTime: T0 + h * H, maxTime: T0 + h * H + 59 * 60_000_000, rows: 60, bytes: statSync(path).size });
    files.set(`${db}.${m}`, list);
  }
}

async function run(svc: QueryService, sql: string, opts: { database?: string; prune?: boolean } = {}) {
  const out = await svc.run({ sql, database: opts.database, prune: opts.prune, access: UNRESTRICTED }, (cols) => new JsonEncoder(cols));
  const body = JSON.parse(Buffer.concat(await out.encoder.finish({ executionTimeMs: 0 })).toString());
  return { body, profile: out.profile };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-query-engine-'));
  root = join(dir, 'data');
  canary = join(dir, 'canary.csv');
  writeFileSync(canary, 'secret\nCANARY-CONTENT-7f3a\n');
  plain = await (await DuckDBInstance.create(':memory:')).connect();
  await writeHours('db1', 'cpu', 6, 'i * 1.5');
  await writeHours('db2', 'mem', 3, 'CAST(i AS BIGINT)');
  // Buffered rows of db1.cpu: one hour after the files, plus one row inside hour 0.
  const n = 4;
  buffered.set('db1.cpu', [
    {
      measurement: 'cpu',
      length: n,
      time: Float64Array.from([T0 + 6 * H, T0 + 6 * H + 1, T0 + 6 * H + 2, T0 + 5]),
      columns: new Map([
        ['host', { type: 'string', values: ['host_9', 'host_0', 'host_9', 'host_1'], valid: null, tag: true }],
        ['usage', { type: 'float64', values: Float64Array.from([1, 2, 3, 4]), valid: null, tag: false }],
      ]),
    },
  ]);
  // Plain DuckDB over the same data: the reference every rewritten query must match.
  await plain.run('CREATE SCHEMA db1; CREATE SCHEMA db2');
  await plain.run(
    `CREATE TABLE db1.cpu AS SELECT * FROM read_parquet([${files.get('db1.cpu')!.map((f) => `'${f.key}'`).join(',')}]) UNION ALL BY NAME
     SELECT * FROM (VALUES (make_timestamp(${T0 + 6 * H}), 'host_9', 1.0::DOUBLE), (make_timestamp(${T0 + 6 * H + 1}), 'host_0', 2.0), (make_timestamp(${T0 + 6 * H + 2}), 'host_9', 3.0), (make_timestamp(${T0 + 5}), 'host_1', 4.0)) t(time, host, usage)`,
  );
  await plain.run(`CREATE TABLE db2.mem AS SELECT * FROM read_parquet([${files.get('db2.mem')!.map((f) => `'${f.key}'`).join(',')}])`);
  const instance = await createSandboxedInstance({ allowedDirectories: [root] });
  service = new QueryService(new ConnectionPool(instance, 2), source(), { timeoutMs: 30_000, slowQueryMs: 0 });
  slowService = new QueryService(new ConnectionPool(instance, 1), source(), { timeoutMs: 150, slowQueryMs: 0 });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Queries whose result must equal plain DuckDB's, pruned or not. */
const CORPUS = [
  'SELECT count(*) AS n FROM db1.cpu',
  `SELECT count(*) AS n FROM db1.cpu WHERE time >= '2024-01-01 02:00:00' AND time < '2024-01-01 04:00:00'`,
  `SELECT count(*) AS n FROM db1.cpu WHERE time > TIMESTAMP '2024-01-01 01:59:00' AND time <= '2024-01-01 03:00:00'`,
  `SELECT count(*) AS n FROM db1.cpu WHERE time BETWEEN '2024-01-01 01:00:00' AND '2024-01-01 01:59:00'`,
  `SELECT count(*) AS n FROM db1.cpu WHERE time = '2024-01-01 03:00:00'`,
  `SELECT count(*) AS n FROM db1.cpu WHERE '2024-01-01 05:00:00' <= time`,
  `SELECT count(*) AS n FROM db1.cpu WHERE time >= DATE '2024-01-01' + INTERVAL 4 HOUR`,
  `SELECT count(*) AS n FROM db1.cpu WHERE time < TIMESTAMP '2024-01-01 00:00:00' + INTERVAL '90 minutes'`,
  `SELECT count(*) AS n FROM db1.cpu WHERE time >= epoch_ms(${T0 / 1000 + 3_600_000}) AND host = 'host_1'`,
  `SELECT count(*) AS n FROM db1.cpu WHERE time >= now() - INTERVAL 1 HOUR`,
  `SELECT count(*) AS n FROM db1.cpu WHERE time > '2024-01-01 05:00:00' AND time < '2024-01-01 01:00:00'`,
  `SELECT count(*) AS n FROM db1.cpu WHERE time >= '2024-01-01 02:00:00' OR host = 'host_9'`,
  `SELECT count(*) AS n FROM db1.cpu WHERE NOT (time < '2024-01-01 02:00:00')`,
  `SELECT host, round(avg(usage), 6) AS a, count(*) AS n FROM db1.cpu WHERE time >= '2024-01-01 03:30:00' GROUP BY host ORDER BY host`,
  `SELECT time_bucket(INTERVAL 1 HOUR, time) AS b, count(*) AS n FROM db1.cpu GROUP BY b ORDER BY b`,
  `SELECT date_trunc('week', time) AS w, count(*) AS n FROM db1.cpu GROUP BY w ORDER BY w`,
  `SELECT * FROM db1.cpu ORDER BY time DESC LIMIT 5`,
  `SELECT * FROM db1.cpu ORDER BY time LIMIT 3 OFFSET 58`,
  `SELECT time, host FROM db1.cpu ORDER BY time DESC LIMIT 70`,
  `SELECT c.time, c.usage, m.usage AS mem FROM db1.cpu c JOIN db2.mem m ON c.time = m.time WHERE c.time >= '2024-01-01 01:00:00' ORDER BY c.time LIMIT 10`,
  `SELECT count(*) AS n FROM db1.cpu c LEFT JOIN db2.mem m ON c.time = m.time WHERE m.time < '2024-01-01 01:00:00'`,
  `SELECT count(*) AS n FROM db1.cpu c FULL OUTER JOIN db2.mem m USING (time) WHERE c.time >= '2024-01-01 02:00:00'`,
  `SELECT count(*) AS n FROM db1.cpu c ANTI JOIN db2.mem m ON c.time = m.time`,
  `SELECT count(*) AS n FROM db1.cpu c SEMI JOIN db2.mem m ON c.time = m.time WHERE c.time < '2024-01-01 02:00:00'`,
  `WITH recent AS (SELECT * FROM db1.cpu WHERE time >= '2024-01-01 04:00:00') SELECT host, count(*) AS n FROM recent GROUP BY host ORDER BY host`,
  `WITH cpu AS (SELECT host FROM db1.cpu WHERE time < '2024-01-01 00:10:00') SELECT count(*) AS n FROM cpu`,
  `WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 5) SELECT sum(i) AS s FROM r`,
  `SELECT count(*) AS n FROM (SELECT * FROM db1.cpu WHERE time < '2024-01-01 01:00:00') x WHERE x.time > '2024-01-01 00:30:00'`,
  `SELECT (SELECT max(time) FROM db2.mem) AS mx, (SELECT count(*) FROM db1.cpu WHERE time >= '2024-01-01 05:00:00') AS n`,
  `SELECT host FROM db1.cpu WHERE time < '2024-01-01 00:05:00' UNION SELECT 'x' ORDER BY 1`,
  `SELECT count(*) AS n FROM db1.cpu a, db1.cpu b WHERE a.time = b.time AND a.time < '2024-01-01 00:03:00' AND b.time >= '2024-01-01 00:01:00'`,
  `SELECT cpu.usage, m.usage AS mu FROM db1.cpu ASOF JOIN db2.mem m ON cpu.time >= m.time WHERE m.time >= '2024-01-01 01:00:00' ORDER BY cpu.time DESC LIMIT 3`,
  `SELECT sum(usage) AS s, sum(CAST(usage AS BIGINT)) AS si FROM db2.mem`,
  `SELECT count(*) AS n FROM db1.cpu WHERE time IN (SELECT time FROM db2.mem WHERE time > '2024-01-01 02:00:00')`,
  `SELECT 9007199254740993 AS big, -9007199254740993 AS neg, 1e300 AS dbl, 'it''s' AS q`,
];

describe('rewrite and pruning', () => {
  test.each(CORPUS.map((q) => [q]))('%s', async (sql) => {
    const expected = JSON.parse(JSON.stringify((await plain.runAndReadAll(sql)).getRowsJson()));
    const pruned = await run(service, sql);
    const unpruned = await run(service, sql, { prune: false });
    expect(pruned.body.data).toEqual(unpruned.body.data);
    // Plain DuckDB's JSON conversion renders timestamps with a space; compare instants instead.
    const norm = (rows: unknown[][]) => rows.map((r) => r.map((v) => (typeof v === 'string' && /^\d{4}-\d\d-\d\d[ T]\d/.test(v) ? Date.parse(v.replace(' ', 'T').replace(/Z?$/, 'Z')) : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v)));
    expect(norm(pruned.body.data)).toEqual(norm(expected));
  });

  test('large JSON results are split across workers and stay in order', async () => {
    const { body } = await run(service, `SELECT i, i * 0.5 AS f, CASE WHEN i % 1000 = 0 THEN 'a string longer than twelve bytes ' || i ELSE 's' || (i % 7) END AS s, make_timestamp(i) AS t FROM range(250000) r(i) ORDER BY i`);
    expect(body.row_count).toBe(250000);
    expect(body.data.length).toBe(250000);
    for (const i of [0, 1, 124999, 125000, 249000, 249999])
      expect(body.data[i]).toEqual([i, i * 0.5, i % 1000 === 0 ? `a string longer than twelve bytes ${i}` : `s${i % 7}`, new Date(Math.floor(i / 1000)).toISOString().slice(0, 19) + (i % 1_000_000 ? `.${String(i % 1_000_000).padStart(6, '0').replace(/0+$/, '')}` : '') + 'Z']);
  });

  test('time bounds prune files; latest-N reads only the newest files', async () => {
    const a = await run(service, `SELECT count(*) FROM db1.cpu WHERE time >= '2024-01-01 02:00:00' AND time < '2024-01-01 04:00:00'`);
    expect(a.profile.files).toBe(3); // hours 2, 3, and hour 4's file starts exactly at the strict bound (kept)
    const b = await run(service, 'SELECT * FROM db1.cpu ORDER BY time DESC LIMIT 5');
    expect(b.profile.files).toBe(1);
    const c = await run(service, 'SELECT * FROM db1.cpu ORDER BY time DESC LIMIT 61');
    expect(c.profile.files).toBe(2);
  });

  test('files of one measurement may differ in columns and types', async () => {
    mkdirSync(join(root, 'db3', 'evo'), { recursive: true });
    const a = join(root, 'db3', 'evo', 'a.parquet');
    const b = join(root, 'db3', 'evo', 'b.parquet');
    await plain.run(`COPY (SELECT make_timestamp(${T0}) AS time, 1.5::DOUBLE AS v) TO '${a}'`);
    await plain.run(`COPY (SELECT make_timestamp(${T0 + 1}) AS time, 'x' AS tag, 7::BIGINT AS v) TO '${b}'`);
    files.set('db3.evo', [a, b].map((path, i) => ({ key: path, minTime: T0 + i, maxTime: T0 + i, rows: 1, bytes: 1 })));
    const { body } = await run(service, 'SELECT v, tag FROM db3.evo ORDER BY time');
    expect(body.data).toEqual([[1.5, null], [7, 'x']]);
  });

  test('bare names resolve in the default database; a missing one is an empty relation', async () => {
    expect((await run(service, 'SELECT count(*) AS n FROM cpu', { database: 'db1' })).body.data).toEqual([[364]]);
    const empty = await run(service, 'SELECT * FROM db1.nothing');
    expect(empty.body).toMatchObject({ columns: ['time'], data: [], row_count: 0 });
    await expect(run(service, 'SELECT * FROM cpu')).rejects.toThrow(/x-svc-database/);
  });

  test('a missing measurement answers zero rows also when the query names its columns', async () => {
    const named = await run(
      service,
      "SELECT content, agent_id FROM db1.nothing WHERE agent_id = 'x' AND contains(tags, ',a,') AND importance > 0.5 ORDER BY time DESC LIMIT 10",
    );
    expect(named.body).toMatchObject({ columns: ['content', 'agent_id'], data: [], row_count: 0 });
    const agg = await run(service, 'SELECT count(*) AS n, avg(v) AS a FROM db1.nothing n WHERE n.v > 1');
    expect(agg.body.data).toEqual([[0, null]]);
    // In a join the missing side's columns are NULL; unqualified names stay the other table's.
    const joined = await run(
      service,
      "SELECT c.host, x.v FROM db1.cpu c LEFT JOIN db1.nothing x ON x.time = c.time WHERE host = 'host_0' ORDER BY c.time LIMIT 2",
    );
    expect(joined.body.data).toEqual([['host_0', null], ['host_0', null]]);
  });
});

describe('guard', () => {
  test(`refuses ${HOSTILE_QUERIES.length} hostile queries with 400 and never reads the canary`, async () => {
    expect(HOSTILE_QUERIES.length).toBeGreaterThanOrEqual(40);
    const before = statSync(canary).atimeMs;
    for (const [label, q] of HOSTILE_QUERIES) {
      const err = await run(service, q.replaceAll(CANARY, canary)).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, label).toBeInstanceOf(AppError);
      expect((err as AppError).status, `${label}: ${(err as Error).message}`).toBe(400);
      expect((err as Error).message).not.toContain('CANARY-CONTENT');
    }
    expect(statSync(canary).atimeMs).toBe(before);
  });

  test('the sandbox refuses file access even without the guard', async () => {
    const instance = await createSandboxedInstance({ allowedDirectories: [root] });
    const conn = await instance.connect();
    for (const q of [`SELECT * FROM read_text('/etc/passwd')`, `SELECT * FROM '${canary}'`, `SELECT * FROM read_csv('${root}/../canary.csv')`])
      await expect(conn.run(q)).rejects.toThrow(/Permission Error|does not exist|disabled/);
    await expect(conn.run('SET enable_external_access = true')).rejects.toThrow(/locked/);
    expect((await conn.runAndReadAll(`SELECT count(*) FROM read_parquet('${files.get('db1.cpu')![0]!.key}')`)).getRows()[0]![0]).toBe(60n);
    conn.closeSync();
  });
});

describe('cancellation', () => {
  test('query.timeout interrupts a slow query with 504, and the connection stays usable', async () => {
    const err = await run(slowService, 'SELECT count(*) FROM range(100000000) a, range(1000) b WHERE a.range * b.range = 7').catch((e: unknown) => e);
    expect((err as AppError).status).toBe(504);
    expect((err as Error).message).toMatch(/query\.timeout/);
    expect((await run(slowService, 'SELECT 1 AS one')).body.data).toEqual([[1]]);
  });

  test('a cancelled query that loaded buffered rows leaves its connection clean', async () => {
    const slow = 'SELECT count(*) FROM db1.cpu, range(100000000) a WHERE a.range * usage = 7';
    expect((await run(slowService, slow).catch((e: unknown) => e)) as AppError).toMatchObject({ status: 504 });
    expect((await run(slowService, 'SELECT count(*) FROM db1.cpu')).body.data).toEqual([[364]]);
  });

  test('an aborted request cancels its query', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const started = performance.now();
    const err = await service
      .run({ sql: 'SELECT count(*) FROM range(100000000) a, range(1000) b WHERE a.range * b.range = 7', signal: ac.signal, access: UNRESTRICTED }, (c) => new JsonEncoder(c))
      .catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/client disconnected/);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

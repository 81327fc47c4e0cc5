/** Continuous queries end to end: both route spellings and body forms, downsampling, re-runs, scheduling, restart. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { waitFor } from './helpers/parquet.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { acrossFires, count, flush, ns, query, writeLines } from './helpers/lifecycle.ts';

const T0 = Date.UTC(2024, 2, 1, 12, 0, 0);
const SQL = `SELECT time_bucket(INTERVAL '1 minute', time) AS time, host, avg(v) AS v_avg, count(*) AS n
  FROM cpu WHERE time >= $start AND time < $end GROUP BY ALL`;
const REFERENCE = `SELECT time_bucket(INTERVAL '1 minute', time) AS time, host, avg(v) AS v_avg, count(*) AS n
  FROM cqdb.cpu WHERE time >= '2024-03-01 12:00:00' AND time < '2024-03-01 12:05:00' GROUP BY ALL ORDER BY time, host`;

describe('continuous queries', () => {
  let s: TestServer;
  let dir = '';
  beforeAll(async () => {
    s = await startServer({ keepDir: true });
    dir = s.dir;
    // Five minutes of 1-second data for two hosts; part of it still buffered when the query runs.
    const lines: string[] = [];
    for (let i = 0; i < 300; i++) lines.push(`cpu,host=a v=${i} ${ns(T0 + i * 1000)}`, `cpu,host=b v=${i * 2 + 0.5} ${ns(T0 + i * 1000 + 500)}`);
    await writeLines(s, 'cqdb', lines.slice(0, 400));
    await flush(s);
    await writeLines(s, 'cqdb', lines.slice(400));
  });
  afterAll(async () => {
    await s.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  test('create validates fields and SQL; both collection paths answer', async () => {
    const base = { name: 'x', database: 'cqdb', destination_measurement: 'cpu_1m', query: SQL };
    const bad: [unknown, string][] = [
      [{ ...base, name: undefined }, 'name'],
      [{ ...base, database: undefined }, 'database'],
      [{ ...base, destination_measurement: undefined }, 'destination_measurement'],
      [{ ...base, query: 'DELETE FROM cpu' }, 'query'],
      [{ ...base, query: 'SELECT FROM WHERE' }, 'query'],
      [{ ...base, schedule: '* *' }, 'schedule'],
      [{ ...base, interval: 'soon' }, 'interval'],
      [{ ...base, source_measurement: 'cpu_1m' }, 'destination_measurement'],
    ];
    for (const [body, field] of bad) {
      const res = await json(s, 'POST', '/api/v1/continuous_queries', body);
      expect({ field, status: res.status }).toEqual({ field, status: 400 });
      expect(res.body.error).toContain(field);
    }
    const writer = await json(s, 'POST', '/api/v1/auth/tokens', { name: 'writer' });
    expect((await json(s, 'POST', '/api/v1/continuous-queries', base, writer.body.token)).status).toBe(403);
    expect((await json(s, 'GET', '/api/v1/continuous-queries', undefined, writer.body.token)).body).toEqual({ continuous_queries: [], count: 0 });
  });

  test('downsamples 1-second data into 1-minute averages equal to a direct query; a re-run replaces', async () => {
    const created = await json(s, 'POST', '/api/v1/continuous_queries', {
      name: 'cpu_1m', database: 'cqdb', source_measurement: 'cpu', destination_measurement: 'cpu_1m', query: SQL, interval: '1m', enabled: false,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'cpu_1m', database: 'cqdb', destination_measurement: 'cpu_1m', interval: '1m', enabled: false });
    const id = created.body.id;
    expect((await json(s, 'GET', `/api/v1/continuous-queries/${id}`)).body).toEqual(created.body);
    const window = { start_time: '2024-03-01T12:00:00Z', end_time: '2024-03-01T12:05:00Z' };
    const dry = await json(s, 'POST', `/api/v1/continuous_queries/${id}/execute`, { ...window, dry_run: true });
    expect(dry.body).toMatchObject({ status: 'success', dry_run: true, rows_written: 10 });
    expect(await count(s, 'SELECT count(*) AS n FROM cqdb.cpu_1m')).toBe(0);
    const run = await json(s, 'POST', `/api/v1/continuous_queries/${id}/execute`, window);
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ status: 'success', trigger: 'manual', window_start: '2024-03-01T12:00:00.000Z', window_end: '2024-03-01T12:05:00.000Z', rows_written: 10, rows_replaced: 0 });
    const expected = await query(s, REFERENCE);
    const got = await query(s, 'SELECT time, host, v_avg, n FROM cqdb.cpu_1m ORDER BY time, host');
    expect(got).toEqual(expected);
    expect(got.length).toBe(10);
    expect(got[0]).toMatchObject({ host: 'a', v_avg: 29.5, n: 60 });
    // The same window again: replaced, not duplicated (also once the first result is in files).
    await flush(s);
    const again = await json(s, 'POST', `/api/v1/continuous_queries/${id}/execute`, window);
    expect(again.body).toMatchObject({ status: 'success', rows_written: 10, rows_replaced: 10 });
    expect(await query(s, 'SELECT time, host, v_avg, n FROM cqdb.cpu_1m ORDER BY time, host')).toEqual(expected);
    // Half the window: only that half is replaced.
    const half = await json(s, 'POST', `/api/v1/continuous_queries/${id}/execute`, { start_time: '2024-03-01T12:00:00Z', end_time: '2024-03-01T12:02:00Z' });
    expect(half.body).toMatchObject({ rows_written: 4, rows_replaced: 4 });
    expect(await count(s, 'SELECT count(*) AS n FROM cqdb.cpu_1m')).toBe(10);
    const history = await json(s, 'GET', `/api/v1/continuous_queries/${id}/executions?limit=2`);
    expect(history.body.count).toBe(2);
    expect(history.body.executions[0]).toEqual(half.body);
    expect((await json(s, 'POST', `/api/v1/continuous_queries/${id}/execute`, { start_time: '2024-03-01T12:00:00Z' })).status).toBe(400);
  });

  test('source/destination form; a result without time fails the run with its reason', async () => {
    const created = await json(s, 'POST', '/api/v1/continuous-queries', {
      name: 'no-time', source_database: 'cqdb', destination_database: 'cqdest', destination_measurement: 'x', query: 'SELECT count(*) AS n FROM cpu',
    });
    expect(created.status).toBe(201);
    const run = await json(s, 'POST', `/api/v1/continuous-queries/${created.body.id}/execute`, { start: 0, end: 1000 });
    expect(run.body.status).toBe('failed');
    expect(run.body.error).toContain("'time'");
    const ok = await json(s, 'PUT', `/api/v1/continuous-queries/${created.body.id}`, { query: "SELECT $start AS time, count(*) AS n, '$end' AS label FROM cpu" });
    expect(ok.status).toBe(200);
    const run2 = await json(s, 'POST', `/api/v1/continuous-queries/${created.body.id}/execute`, { start: T0, end: T0 + 60_000 });
    expect(run2.body).toMatchObject({ status: 'success', rows_written: 1 });
    expect(await query(s, 'SELECT time, n, label FROM cqdest.x')).toEqual([{ time: '2024-03-01T12:00:00Z', n: 600, label: '$end' }]);
    expect((await json(s, 'DELETE', `/api/v1/continuous-queries/${created.body.id}`)).status).toBe(200);
  });

  test('an interval query fires on its own, each window once; schedules survive a restart', async () => {
    const now = Date.now();
    await writeLines(s, 'cqdb', Array.from({ length: 20 }, (_, i) => `live v=${i} ${ns(now - 10_000 + i * 1000)}`));
    const created = await json(s, 'POST', '/api/v1/continuous_queries', {
      name: 'live_1s', database: 'cqdb', destination_measurement: 'live_1s', interval: '1s',
      query: 'SELECT time_bucket(INTERVAL 1 second, time) AS time, count(*) AS n FROM live WHERE time >= $start AND time < $end GROUP BY ALL',
    });
    const id = created.body.id;
    const runs = async () => (await json(s, 'GET', `/api/v1/continuous_queries/${id}/executions`)).body.executions as { trigger: string; status: string; window_start: string }[];
    await waitFor(async () => (await runs()).length >= 2, 5000, 'scheduled runs');
    const seen = await runs();
    // The newest may still be running.
    expect(seen.filter((r) => r.trigger !== 'schedule' || (r.status !== 'success' && r.status !== 'running'))).toEqual([]);
    expect(new Set(seen.map((r) => r.window_start)).size).toBe(seen.length);
    expect(await s.stop()).toBe(0);
    s = await startServer({ dir, keepDir: true });
    expect((await json(s, 'GET', '/api/v1/continuous_queries')).body.count).toBe(2);
    const before = (await runs()).length;
    await waitFor(async () => (await runs()).length > before, 5000, 'scheduled run after restart');
    // An update takes effect without restart: disabled, it stops firing.
    expect((await json(s, 'PUT', `/api/v1/continuous_queries/${id}`, { enabled: false })).body.enabled).toBe(false);
    // A witness on the same 1 s interval proves the scheduler had its chances: it runs, the disabled query does not.
    const witness = await json(s, 'POST', '/api/v1/continuous_queries', {
      name: 'live_witness', database: 'cqdb', destination_measurement: 'live_witness', interval: '1s',
      query: 'SELECT time_bucket(INTERVAL 1 second, time) AS time, count(*) AS n FROM live WHERE time >= $start AND time < $end GROUP BY ALL',
    });
    const witnessRuns = async () => ((await json(s, 'GET', `/api/v1/continuous_queries/${witness.body.id}/executions`)).body.executions as unknown[]).length;
    const disabled = await acrossFires(witnessRuns, 2, async () => (await runs()).length);
    expect(disabled.after).toBe(disabled.before);
    expect((await json(s, 'DELETE', `/api/v1/continuous_queries/${witness.body.id}`)).status).toBe(200);
  }, 60_000);
  test('a failed scheduled run is recorded with its error and its window retried on a later fire', async () => {
    const created = await json(s, 'POST', '/api/v1/continuous_queries', {
      name: 'flaky', database: 'cqdb', destination_measurement: 'flaky_out', interval: '1s',
      query: 'SELECT $start AS time, count(*) AS n, sum(missing_column) AS m FROM cpu',
    });
    const id = created.body.id;
    type Run = { trigger: string; status: string; window_start: string; error: string | null };
    const runs = async () => (await json(s, 'GET', `/api/v1/continuous_queries/${id}/executions`)).body.executions as Run[];
    await waitFor(async () => (await runs()).some((r) => r.status === 'failed'), 5000, 'a failed run');
    const failed = (await runs()).find((r) => r.status === 'failed')!;
    expect(failed.error).toContain('missing_column');
    await json(s, 'PUT', `/api/v1/continuous_queries/${id}`, { query: 'SELECT $start AS time, count(*) AS n FROM cpu' });
    await waitFor(async () => (await runs()).some((r) => r.window_start === failed.window_start && r.status === 'success'), 5000, 'the failed window retried');
    await json(s, 'DELETE', `/api/v1/continuous_queries/${id}`);
  });
});

/**
 * Query management and governance end to end on a real server: the registry sees every query path,
 * cancel really stops DuckDB (one query connection: the next query could not run otherwise), a
 * client that leaves cancels its query, and every governance limit answers with its status and
 * header. Daily counters survive a restart.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { decode } from 'msgpackr';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/until.ts';

let s: TestServer;
const MEMORY_KEY = 'svcm_test_admin_key_0123456789abcdefghijklmnop';
const ENV = { SVC_QUERY_MAX_CONCURRENT: '1', SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_KEY };
let user: { id: string; token: string };
let other: { id: string; token: string };

/** A CROSS JOIN over 200k x 200k rows: hours of work unless something stops it. */
const LONG = 'SELECT count(*) AS n FROM range(200000) a CROSS JOIN range(200000) b WHERE a.range * b.range = 7';

const query = (sql: string, token?: string, path = '/api/v1/query', init: RequestInit = {}) =>
  s.fetch(path, { method: 'POST', token, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql }), ...init });

const activeBy = (pred: (q: { sql: string; token_id: string | null }) => boolean) =>
  until(async () => ((await json(s, 'GET', '/api/v1/queries/active')).body.queries as { id: string; sql: string; token_id: string | null }[]).find(pred));

async function createToken(name: string) {
  const r = await json(s, 'POST', '/api/v1/auth/tokens', { name, permissions: ['read', 'write'] });
  expect(r.status).toBe(201);
  return { id: r.body.id as string, token: r.body.token as string };
}

beforeAll(async () => {
  // One query connection: a query DuckDB still ran after its cancel would hold up the next one.
  s = await startServer({ env: ENV });
  user = await createToken('governed');
  other = await createToken('bystander');
});
afterAll(async () => {
  await s.cleanup();
  rmSync(s.dir, { recursive: true, force: true });
});

describe('query management', () => {
  test('a running query is listed (SQL cut to 200 characters), shown whole by id, and a cancel stops DuckDB', async () => {
    const pad = 'x'.repeat(300);
    const sql = `SELECT count(*) AS n, '${pad}' AS pad FROM range(200000) a CROSS JOIN range(200000) b WHERE a.range * b.range = 7`;
    const pending = query(sql);
    const running = await activeBy((q) => q.sql.startsWith('SELECT count(*) AS n, '));
    expect(running.sql.length).toBe(200);
    const full = await json(s, 'GET', `/api/v1/queries/${running.id}`);
    expect(full.body).toMatchObject({ id: running.id, sql, format: 'json', source: 'query', token_name: 'admin', status: 'running', client_ip: '127.0.0.1' });
    expect(typeof full.body.elapsed_ms).toBe('number');
    expect(typeof full.body.started_at).toBe('string');

    const started = performance.now();
    const cancel = await json(s, 'DELETE', `/api/v1/queries/${running.id}`);
    expect(cancel).toMatchObject({ status: 200, body: { message: 'query cancelled', id: running.id } });
    const res = await pending;
    const waited = performance.now() - started;
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: string }).error).toContain("cancelled by token 'admin'");
    // Generous bound on a shared machine; the query would otherwise run for hours.
    expect(waited).toBeLessThan(10_000);
    // The only query connection is free again: DuckDB's work was interrupted.
    const next = await query('SELECT 42 AS answer');
    expect(((await next.json()) as { data: unknown[][] }).data).toEqual([[42]]);

    const done = await json(s, 'GET', `/api/v1/queries/${running.id}`);
    expect(done.body).toMatchObject({ status: 'cancelled', row_count: 0 });
    expect(done.body.error).toContain('cancelled by');
    expect(typeof done.body.finished_at).toBe('string');
    expect(typeof done.body.duration_ms).toBe('number');
    expect((await json(s, 'DELETE', `/api/v1/queries/${running.id}`)).status).toBe(409);
    expect((await json(s, 'DELETE', '/api/v1/queries/q_unknown')).status).toBe(404);
    expect((await json(s, 'GET', '/api/v1/queries/q_unknown')).status).toBe(404);
  });

  test('a client that disconnects cancels its query', async () => {
    const ac = new AbortController();
    const pending = query(LONG, undefined, '/api/v1/query', { signal: ac.signal }).catch(() => null);
    const running = await activeBy((q) => q.sql === LONG);
    ac.abort();
    await pending;
    const rec = await until(async () => {
      const r = (await json(s, 'GET', `/api/v1/queries/${running.id}`)).body;
      return r.status !== 'running' && r;
    });
    expect(rec).toMatchObject({ status: 'cancelled' });
    expect(rec.error).toContain('client disconnected');
    expect(((await (await query('SELECT 1 AS one')).json()) as { data: unknown[][] }).data).toEqual([[1]]);
  });

  test('a query still waiting for the engine answers its cancel at once', async () => {
    const first = query(LONG);
    const running = await activeBy((q) => q.sql === LONG);
    const queued = query('SELECT 2 AS waiting', other.token);
    const waiting = await activeBy((q) => q.token_id === other.id);
    expect((await json(s, 'DELETE', `/api/v1/queries/${waiting.id}`)).status).toBe(200);
    const res = await queued;
    expect(res.status).toBe(409);
    // The first query was not disturbed: it is still running until cancelled itself.
    expect((await json(s, 'GET', `/api/v1/queries/${running.id}`)).body.status).toBe('running');
    expect((await json(s, 'DELETE', `/api/v1/queries/${running.id}`)).status).toBe(200);
    expect((await first).status).toBe(409);
    expect(((await (await query('SELECT 3 AS n', other.token)).json()) as { data: unknown[][] }).data).toEqual([[3]]);
  });

  test('every query path is registered: formats, estimate, SHOW, the measurement route', async () => {
    await query('SELECT 1 AS a', undefined, '/api/v1/query/arrow').then((r) => r.arrayBuffer());
    await query('SELECT 1 AS a', undefined, '/api/v1/query/msgpack').then((r) => r.arrayBuffer());
    await query('SELECT 1 AS a', undefined, '/api/v1/query/estimate').then((r) => r.text());
    await query('SHOW DATABASES').then((r) => r.text());
    await s.fetch('/api/v1/query/cpu?database=nodb').then((r) => r.text());
    const hist = (await json(s, 'GET', '/api/v1/queries/history?limit=10')).body.queries as { source: string; format: string }[];
    const seen = hist.map((q) => `${q.source}/${q.format}`);
    for (const want of ['query/arrow', 'query/msgpack', 'estimate/json', 'show/json', 'measurement/json']) expect(seen).toContain(want);
  });

  test('continuous-query runs and the memory service reads are registered under their own source', async () => {
    expect((await json(s, 'POST', '/api/v1/databases', { name: 'cqg' })).status).toBe(201);
    const w = await s.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'cqg' }, body: 'cpu,host=a v=1 1709294400000000000' });
    expect(w.status).toBe(204);
    const cq = await json(s, 'POST', '/api/v1/continuous_queries', {
      name: 'cq_g', database: 'cqg', source_measurement: 'cpu', destination_measurement: 'cpu_1m', enabled: false, interval: '1m',
      query: 'SELECT time_bucket(INTERVAL 1 minute, time) AS time, count(*) AS n FROM cpu WHERE time >= $start AND time < $end GROUP BY ALL',
    });
    expect(cq.status).toBe(201);
    const run = await json(s, 'POST', `/api/v1/continuous_queries/${cq.body.id}/execute`, { start_time: '2024-03-01T12:00:00Z', end_time: '2024-03-01T12:05:00Z', dry_run: true });
    expect(run.body).toMatchObject({ status: 'success', rows_written: 1 });
    const mem = await fetch(`${s.memoryUrl}/api/v1/memories?agent_id=a1`, { headers: { 'x-api-key': MEMORY_KEY } });
    expect(mem.status).toBe(200);
    const hist = (await json(s, 'GET', '/api/v1/queries/history?limit=20')).body.queries as { source: string; token_name: string | null; database: string | null }[];
    expect(hist.find((q) => q.source === 'continuous_query')).toMatchObject({ token_name: 'continuous_query:cq_g', database: 'cqg' });
    expect(hist.find((q) => q.source === 'memory')).toMatchObject({ token_name: 'memory-service' });
  });

  test('history: newest first, filters, limit bounds; admin only', async () => {
    const h = await json(s, 'GET', '/api/v1/queries/history?status=cancelled');
    expect(h.body.count).toBeGreaterThanOrEqual(2);
    expect((h.body.queries as { status: string }[]).every((q) => q.status === 'cancelled')).toBe(true);
    const all = (await json(s, 'GET', '/api/v1/queries/history?limit=1000')).body.queries as { finished_at: string }[];
    const times = all.map((q) => Date.parse(q.finished_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect((await json(s, 'GET', '/api/v1/queries/history?limit=1001')).status).toBe(400);
    expect((await json(s, 'GET', '/api/v1/queries/history?status=bogus')).status).toBe(400);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await json(s, 'GET', `/api/v1/queries/history?since=${future}`)).body.count).toBe(0);
    expect((await json(s, 'GET', '/api/v1/queries/history?token_id=nobody')).body.count).toBe(0);
    expect((await json(s, 'GET', '/api/v1/queries/active', undefined, user.token)).status).toBe(403);
    expect((await json(s, 'GET', '/api/v1/queries/active', undefined, null)).status).toBe(401);
  });
});

describe('governance', () => {
  let policyId = '';

  test('policy bodies are checked: unknown fields, negative numbers, unknown tokens are 400', async () => {
    expect((await json(s, 'POST', '/api/v1/governance/policies', { token_id: user.id, bogus: 1 })).status).toBe(400);
    expect((await json(s, 'POST', '/api/v1/governance/policies', { token_id: user.id, rate_limit_per_minute: -1 })).status).toBe(400);
    expect((await json(s, 'POST', '/api/v1/governance/policies', { token_id: 'no-such-token' })).status).toBe(400);
    expect((await json(s, 'POST', '/api/v1/governance/policies', { token_id: user.id }, user.token)).status).toBe(403);
    const created = await json(s, 'POST', '/api/v1/governance/policies', { token_id: user.id, max_rows_per_query: 5 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ token_id: user.id, max_rows_per_query: 5, rate_limit_per_minute: null, max_concurrent_queries: null });
    policyId = created.body.id;
    expect((await json(s, 'GET', `/api/v1/governance/policies/${policyId}`)).body.id).toBe(policyId);
    expect((await json(s, 'GET', '/api/v1/governance/policies')).body.count).toBe(1);
    expect((await json(s, 'GET', '/api/v1/governance/policies/gp_none')).status).toBe(404);
  });

  test('max_rows_per_query cuts the result and says so on every format', async () => {
    const r = await query('SELECT * FROM range(20) t(i) ORDER BY i', user.token);
    const body = (await r.json()) as { data: unknown[][]; row_count: number; rows_capped?: boolean };
    expect(body).toMatchObject({ row_count: 5, rows_capped: true });
    expect(body.data).toEqual([[0], [1], [2], [3], [4]]);
    const small = (await (await query('SELECT * FROM range(5) t(i)', user.token)).json()) as { rows_capped?: boolean; row_count: number };
    expect(small.row_count).toBe(5);
    expect(small.rows_capped).toBeUndefined();
    const arrow = await query('SELECT * FROM range(20) t(i)', user.token, '/api/v1/query/arrow');
    expect(arrow.headers.get('x-svc-rows-capped')).toBe('true');
    await arrow.arrayBuffer();
    const mp = await query('SELECT * FROM range(20) t(i)', user.token, '/api/v1/query/msgpack');
    expect(mp.headers.get('x-svc-rows-capped')).toBe('true');
    expect(decode(new Uint8Array(await mp.arrayBuffer()))).toMatchObject({ row_count: 5, rows_capped: true });
    const exp = await s.fetch('/api/v1/query/export', { method: 'POST', token: user.token, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql: 'SELECT * FROM range(20) t(i)', format: 'csv' }) });
    expect(exp.headers.get('x-svc-rows-capped')).toBe('true');
    expect(exp.headers.get('x-svc-row-count')).toBe('5');
    await exp.text();
    const last = (await json(s, 'GET', `/api/v1/queries/history?limit=1&token_id=${user.id}`)).body.queries[0];
    expect(last).toMatchObject({ source: 'export', format: 'csv', row_count: 5 });
    // The admin has no policy: not capped.
    expect(((await (await query('SELECT * FROM range(20) t(i)')).json()) as { row_count: number }).row_count).toBe(20);
  });

  const usage = async (token = user.token) => (await json(s, 'GET', `/api/v1/governance/usage/${user.id}`, undefined, token)).body;

  test('rate_limit_per_minute and rate_limit_per_hour: 429 naming the limit, with Retry-After', async () => {
    for (const limit of ['rate_limit_per_minute', 'rate_limit_per_hour'] as const) {
      const u = await usage();
      const allowed = (limit === 'rate_limit_per_minute' ? u.queries_last_minute : u.queries_last_hour) + 1;
      expect((await json(s, 'PUT', `/api/v1/governance/policies/${policyId}`, { rate_limit_per_minute: null, [limit]: allowed })).status).toBe(200);
      expect((await query('SELECT 1', user.token)).status).toBe(200);
      const refused = await query('SELECT 1', user.token);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: string }).error).toContain(limit);
      const retry = Number(refused.headers.get('retry-after'));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(limit === 'rate_limit_per_minute' ? 60 : 3600);
      // Every query path is governed, the estimate too.
      expect((await query('SELECT 1', user.token, '/api/v1/query/estimate')).status).toBe(429);
    }
    expect((await json(s, 'PUT', `/api/v1/governance/policies/${policyId}`, { rate_limit_per_hour: null })).status).toBe(200);
    expect((await query('SELECT 1', user.token)).status).toBe(200);
  });

  test('max_queries_per_day: 429 with Retry-After until the next UTC day', async () => {
    const u = await usage();
    await json(s, 'PUT', `/api/v1/governance/policies/${policyId}`, { max_queries_per_day: u.queries_today });
    const refused = await query('SELECT 1', user.token);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: string }).error).toContain('max_queries_per_day');
    const retry = Number(refused.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(86_400);
    await json(s, 'PUT', `/api/v1/governance/policies/${policyId}`, { max_queries_per_day: null });
  });

  test('max_concurrent_queries: a second query while one runs is 429', async () => {
    await json(s, 'PUT', `/api/v1/governance/policies/${policyId}`, { max_concurrent_queries: 1 });
    const pending = query(LONG, user.token);
    const running = await activeBy((q) => q.token_id === user.id);
    const refused = await query('SELECT 1', user.token);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: string }).error).toContain('max_concurrent_queries');
    expect(refused.headers.get('retry-after')).toBe('1');
    // Another token is not held back by this one's limit (it waits only for the engine's one connection).
    await json(s, 'DELETE', `/api/v1/queries/${running.id}`);
    expect((await pending).status).toBe(409);
    expect((await query('SELECT 1', other.token)).status).toBe(200);
    expect((await query('SELECT 1', user.token)).status).toBe(200);
    await json(s, 'PUT', `/api/v1/governance/policies/${policyId}`, { max_concurrent_queries: null });
  });

  test('max_scan_duration_seconds: the query is stopped, 504 naming the limit, status timed_out', async () => {
    await json(s, 'PUT', `/api/v1/governance/policies/${policyId}`, { max_scan_duration_seconds: 0.3 });
    const r = await query(LONG, user.token);
    expect(r.status).toBe(504);
    expect(((await r.json()) as { error: string }).error).toContain('max_scan_duration_seconds');
    const h = (await json(s, 'GET', `/api/v1/queries/history?token_id=${user.id}&status=timed_out`)).body;
    expect(h.count).toBe(1);
    expect(((await (await query('SELECT 7 AS n')).json()) as { data: unknown[][] }).data).toEqual([[7]]);
    await json(s, 'PUT', `/api/v1/governance/policies/${policyId}`, { max_scan_duration_seconds: null });
  });

  test('the default policy binds tokens without their own, never admins; a token reads only its own usage', async () => {
    const def = await json(s, 'POST', '/api/v1/governance/policies', { token_id: null, max_rows_per_query: 2 });
    expect(def.status).toBe(201);
    expect((await json(s, 'POST', '/api/v1/governance/policies', { token_id: null })).status).toBe(409);
    expect(((await (await query('SELECT * FROM range(9)', other.token)).json()) as { row_count: number }).row_count).toBe(2);
    expect(((await (await query('SELECT * FROM range(9)', user.token)).json()) as { row_count: number }).row_count).toBe(5);
    expect(((await (await query('SELECT * FROM range(9)')).json()) as { row_count: number }).row_count).toBe(9);
    expect((await json(s, 'DELETE', `/api/v1/governance/policies/${def.body.id}`)).status).toBe(200);
    expect(((await (await query('SELECT * FROM range(9)', other.token)).json()) as { row_count: number }).row_count).toBe(9);

    const own = await usage();
    expect(own).toMatchObject({ token_id: user.id, policy: { id: policyId } });
    expect(own.rejected_today).toBeGreaterThanOrEqual(5);
    expect(own.capped_today).toBeGreaterThanOrEqual(4);
    expect(own.rows_returned_today).toBeGreaterThan(0);
    expect(own.queries_today).toBeGreaterThanOrEqual(own.queries_last_hour);
    expect((await json(s, 'GET', `/api/v1/governance/usage/${user.id}`, undefined, other.token)).status).toBe(403);
    expect((await json(s, 'GET', '/api/v1/governance/usage/nobody')).status).toBe(404);
  });

  test('daily counters survive a restart', async () => {
    const before = await usage();
    expect(await s.stop()).toBe(0);
    s = await startServer({ dir: s.dir, env: ENV });
    const after = await usage();
    expect(after).toMatchObject({
      queries_today: before.queries_today,
      rows_returned_today: before.rows_returned_today,
      rejected_today: before.rejected_today,
      capped_today: before.capped_today,
      policy: { id: policyId, max_rows_per_query: 5 },
    });
  }, 60_000);
});

describe('switched off by configuration', () => {
  test('without query management and governance their routes say so and queries run; include_reads audits reads', async () => {
    const off = await startServer({
      env: { SVC_QUERY_MANAGEMENT_ENABLED: 'false', SVC_GOVERNANCE_ENABLED: 'false', SVC_AUDIT_LOG_ENABLED: 'true', SVC_AUDIT_LOG_INCLUDE_READS: 'true' },
    });
    try {
      const active = await json(off, 'GET', '/api/v1/queries/active');
      expect(active).toMatchObject({ status: 404, body: { error: 'query management is disabled (query_management.enabled = false)' } });
      expect((await json(off, 'GET', '/api/v1/governance/policies')).body.error).toContain('governance.enabled = false');
      const q = await json(off, 'POST', '/api/v1/query', { sql: 'SELECT 1 AS a' });
      expect(q.body.data).toEqual([[1]]);
      expect((await json(off, 'GET', '/api/v1/databases')).status).toBe(200);
      const events = (await json(off, 'GET', '/api/v1/audit/logs')).body.events as { action: string; status: number }[];
      expect(events.map((e) => e.action)).toEqual(expect.arrayContaining(['query.run', 'database.read', 'query.active']));
    } finally {
      await off.cleanup();
    }
  }, 60_000);
});

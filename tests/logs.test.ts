/**
 * GET /api/v1/logs and the log output against real servers: admin only, parameter checks, level and age
 * filters, newest first; JSON lines when log.format = "json"; one debug line per request at level debug.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { waitFor } from './helpers/until.ts';

let debugJson: TestServer;
let plain: TestServer;

beforeAll(async () => {
  [debugJson, plain] = await Promise.all([startServer({ env: { SVC_LOG_LEVEL: 'debug', SVC_LOG_FORMAT: 'json' } }), startServer()]);
});
afterAll(async () => {
  await Promise.all([debugJson?.cleanup(), plain?.cleanup()]);
});

describe('GET /api/v1/logs', () => {
  test('needs an admin token: 401 without one, 403 for a non-admin token', async () => {
    expect((await json(plain, 'GET', '/api/v1/logs', undefined, null)).status).toBe(401);
    const created = await json(plain, 'POST', '/api/v1/auth/tokens', { name: 'logs-reader', permissions: ['read'] });
    expect(created.status).toBe(201);
    const res = await json(plain, 'GET', '/api/v1/logs', undefined, created.body.token);
    expect(res.status).toBe(403);
  });

  test('defaults: limit 100, since_minutes 60, no level filter; newest first', async () => {
    const { status, body } = await json(debugJson, 'GET', '/api/v1/logs');
    expect(status).toBe(200);
    expect(body).toMatchObject({ limit: 100, since_minutes: 60, level_filter: null });
    expect(body.count).toBe(body.logs.length);
    expect(body.logs.some((e: { msg: string }) => e.msg === 'svc started')).toBe(true);
    const times = body.logs.map((e: { time: string }) => Date.parse(e.time));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    for (const e of body.logs) expect(['debug', 'info', 'warn', 'error']).toContain(e.level);
  });

  test('limit caps the count; level keeps that level and above', async () => {
    for (let i = 0; i < 5; i++) await fetch(debugJson.url + '/health');
    const limited = await json(debugJson, 'GET', '/api/v1/logs?limit=3');
    expect(limited.body.count).toBe(3);
    const debug = await json(debugJson, 'GET', '/api/v1/logs?level=debug&limit=1000');
    expect(debug.body.logs.some((e: { level: string }) => e.level === 'debug')).toBe(true);
    const info = await json(debugJson, 'GET', '/api/v1/logs?level=INFO&limit=1000');
    expect(info.body.level_filter).toBe('info');
    expect(info.body.logs.length).toBeGreaterThan(0);
    expect(info.body.logs.every((e: { level: string }) => e.level !== 'debug')).toBe(true);
    const errors = await json(debugJson, 'GET', '/api/v1/logs?level=error&since_minutes=1440');
    expect(errors.body.logs.every((e: { level: string }) => e.level === 'error')).toBe(true);
  });

  test('since_minutes keeps only recent entries', async () => {
    const { body } = await json(debugJson, 'GET', '/api/v1/logs?since_minutes=1&limit=1000');
    const cutoff = Date.now() - 61_000;
    expect(body.since_minutes).toBe(1);
    expect(body.logs.every((e: { time: string }) => Date.parse(e.time) >= cutoff)).toBe(true);
  });

  test('bad parameters are 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=2.5', 'limit'],
      ['level=fatal', 'level'],
      ['level=', 'level'],
      ['since_minutes=0', 'since_minutes'],
      ['since_minutes=1441', 'since_minutes'],
      ['since_minutes=-1', 'since_minutes'],
    ];
    for (const [query, param] of cases) {
      const { status, body } = await json(plain, 'GET', `/api/v1/logs?${query}`);
      expect([query, status]).toEqual([query, 400]);
      expect(body.error).toStartWith(`${param}: `);
    }
    expect((await json(plain, 'GET', '/api/v1/logs?limit=1000&since_minutes=1440&level=warn')).status).toBe(200);
  });
});

describe('log output', () => {
  test('log.format = "json" writes one JSON object per line; level debug logs each request with route, status, duration', async () => {
    await fetch(debugJson.url + '/api/v1/metrics/timeseries/nope');
    // The line is written before the response; it reaches this process through a pipe.
    const entries = () => debugJson.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const ofRequest = () => entries().filter((e) => e.msg === 'request' && e.path === '/api/v1/metrics/timeseries/nope');
    await waitFor('the request line on stderr', async () => ofRequest().length > 0);
    expect(entries().length).toBeGreaterThan(3);
    for (const e of entries()) expect(typeof e.time === 'string' && typeof e.level === 'string' && typeof e.msg === 'string').toBe(true);
    const requests = ofRequest();
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ level: 'debug', method: 'GET', status: 400, group: 'observability' });
    expect(typeof requests[0]!.duration_ms).toBe('number');
  });

  test('text format at the default level info: no per-request lines', async () => {
    expect((await plain.fetch('/api/v1/databases')).status).toBe(200);
    // An info line written after that request: had it been logged, its line would be on stderr before this one.
    const marker = await plain.fetch('/api/v1/import/csv?db=logmark&measurement=marker', { method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'time,v\n2024-01-01T00:00:00Z,1\n' });
    expect(marker.status).toBe(200);
    await waitFor('the import line on stderr', async () => / INFO  import committed /.test(plain.output()));
    expect((await json(plain, 'GET', '/api/v1/logs?limit=1000')).body.logs.filter((e: { msg: string }) => e.msg === 'request')).toEqual([]);
    const out = plain.output();
    expect(out).toMatch(/^\S+Z INFO  svc started /m);
    expect(out).not.toContain(' DEBUG ');
    expect(out).not.toMatch(/^\{/m);
  });
});

/** The console's routes without a browser: headers, assets, the redirect, and console.enabled = false. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startServer, type TestServer } from './helpers/server.ts';

let on: TestServer;
let off: TestServer;
beforeAll(async () => {
  [on, off] = await Promise.all([startServer(), startServer({ env: { SVC_CONSOLE_ENABLED: 'false' } })]);
});
afterAll(async () => {
  await Promise.all([on?.cleanup(), off?.cleanup()]);
});

describe('console routes', () => {
  test('page and assets answer without credentials, with a strict CSP and no inline code', async () => {
    const page = await on.fetch('/console', { token: null });
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const html = await page.text();
    expect(html).not.toMatch(/<script>|style=|https?:\/\//);
    const js = await on.fetch('/console/assets/app.js', { token: null });
    expect(js.headers.get('content-type')).toContain('text/javascript');
    const code = await js.text();
    // Bundled, uPlot included: nothing is fetched from elsewhere.
    expect(code).toContain('uplot');
    expect(code).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\.[a-z]{2,}\//i);
    expect((await on.fetch('/console/assets/app.css', { token: null })).headers.get('content-type')).toContain('text/css');
  });

  test('GET / sends a browser to /console; other clients get a 404 naming it', async () => {
    const browser = await on.fetch('/', { token: null, headers: { accept: 'text/html,*/*' }, redirect: 'manual' });
    expect(browser.status).toBe(302);
    expect(browser.headers.get('location')).toBe('/console');
    const api = await on.fetch('/', { token: null, headers: { accept: 'application/json' } });
    expect(api.status).toBe(404);
    expect(((await api.json()) as { error: string }).error).toMatch(/\/console/);
  });

  test('the memory proxy needs the time-series token and passes the memory key on', async () => {
    expect((await on.fetch('/console/memory/api/v1/agents', { token: null })).status).toBe(401);
    const noKey = await on.fetch('/console/memory/api/v1/agents');
    expect(noKey.status).toBe(401);
    expect(((await noKey.json()) as { message?: string }).message ?? '').toMatch(/API key/);
  });

  test('console.enabled = false: no page, no redirect', async () => {
    expect((await off.fetch('/console', { token: null })).status).toBe(404);
    expect((await off.fetch('/', { token: null, headers: { accept: 'text/html' }, redirect: 'manual' })).status).toBe(404);
    expect((await off.fetch('/console/memory/api/v1/agents')).status).toBe(404);
  });
});

describe('POST /api/v1/query/export', () => {
  test('csv, parquet and arrow with a filename; SHOW and bad formats are 400', async () => {
    const body = (format: string, extra = {}) => ({ method: 'POST', body: JSON.stringify({ sql: 'SELECT range AS n, range * 1.5 AS x FROM range(3)', format, ...extra }) });
    const csv = await on.fetch('/api/v1/query/export', body('csv', { filename: 'nums.csv' }));
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="nums.csv"');
    expect(csv.headers.get('x-svc-row-count')).toBe('3');
    expect(await csv.text()).toBe('n,x\n0,0\n1,1.5\n2,3\n');
    const parquet = new Uint8Array(await (await on.fetch('/api/v1/query/export', body('parquet'))).arrayBuffer());
    expect(new TextDecoder().decode(parquet.slice(0, 4))).toBe('PAR1');
    const arrow = await on.fetch('/api/v1/query/export', body('arrow'));
    expect(arrow.headers.get('content-type')).toBe('application/vnd.apache.arrow.stream');
    expect((await on.fetch('/api/v1/query/export', body('xml'))).status).toBe(400);
    expect((await on.fetch('/api/v1/query/export', body('csv', { filename: '../x' }))).status).toBe(400);
    const show = await on.fetch('/api/v1/query/export', { method: 'POST', body: JSON.stringify({ sql: 'SHOW DATABASES', format: 'csv' }) });
    expect(show.status).toBe(400);
    expect((await on.fetch('/api/v1/query/export', { ...body('csv'), token: null })).status).toBe(401);
  });
});

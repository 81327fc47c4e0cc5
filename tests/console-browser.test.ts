/**
 * The web console in a real headless Chromium (Debian's, driven by playwright-core; no browser
 * download) against a real server: log in, browse the schema, run a query and see rows and a chart,
 * see an error, cancel a long query, export, upload a small CSV, the admin and memory pages, and a 401
 * returning to the login. A screenshot of each page goes to test-output/console/ (gitignored).
 * Without chromium the suite is skipped locally and fails under CI (tests/helpers/ci.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { toolPresent } from './helpers/ci.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from './helpers/server.ts';
import { waitFor } from './helpers/until.ts';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(import.meta.dir, '..', 'test-output', 'console');
const MEMORY_KEY = 'svcm_console_test_key_0123456789abcdefghijkl';
const T0 = Date.UTC(2024, 0, 1);
const available = toolPresent(existsSync(CHROMIUM), `chromium (${CHROMIUM}; apt-get install chromium)`);

let s: TestServer;
let context: BrowserContext;
let page: Page;
let profile: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!available) return;
  mkdirSync(SHOTS, { recursive: true });
  profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  [s, context] = await Promise.all([
    startServer({ env: { SVC_MEMORY_BOOTSTRAP_KEY: MEMORY_KEY } }),
    chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      acceptDownloads: true,
      viewport: { width: 1280, height: 900 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    }),
  ]);
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
  // A CSP violation or a script error shows up here; the page must have none.
  page.on('pageerror', (err) => pageErrors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) pageErrors.push(`console: ${msg.text()}`);
  });
  // 120 rows, one a minute, two numeric fields: enough for a chart.
  const lines = Array.from({ length: 120 }, (_, i) => `temps,room=${i % 2 ? 'hall' : 'lab'} celsius=${20 + Math.sin(i / 10) * 3},humidity=${40 + (i % 7)} ${(T0 + i * 60_000) * 1_000_000}`);
  expect((await s.fetch('/write?db=webdb', { method: 'POST', body: lines.join('\n') })).status).toBe(204);
  const memoryApi = (path: string, body: unknown) => fetch(`${s.memoryUrl}${path}`, { method: 'POST', headers: { 'x-api-key': MEMORY_KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const agent = await memoryApi('/api/v1/agents', { name: 'console-agent' });
  expect(agent.status).toBe(201);
  const agentId = ((await agent.json()) as { agent_id: string }).agent_id;
  expect((await memoryApi('/api/v1/memories', { agent_id: agentId, content: 'the walrus prefers cold water' })).status).toBe(201);
  expect((await memoryApi('/api/v1/memories', { agent_id: agentId, content: 'an unrelated note about tea' })).status).toBe(201);
}, 60_000); // a server and Chromium starting on two shared cores

afterAll(async () => {
  await context?.close();
  await s?.cleanup();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const queryErrors = async () => Number(/svc_query_errors_total (\d+)/.exec(await (await s.fetch('/metrics')).text())?.[1] ?? NaN);

async function runSql(sql: string, how: 'click' | 'keys' = 'click') {
  await page.getByTestId('sql-editor').fill(sql);
  if (how === 'click') await page.getByTestId('run-button').click();
  else await page.getByTestId('sql-editor').press('Control+Enter');
}

describe.skipIf(!available)('web console in headless Chromium', () => {
  test('a browser opening / lands on the console, with a strict CSP; a wrong token is refused; the right one logs in', async () => {
    const res = await page.goto(s.url + '/');
    expect(new URL(page.url()).pathname).toBe('/console');
    expect(res!.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.getByTestId('token-input').fill('svc_not_a_real_token_0123456789abcdefghijklm');
    await page.getByTestId('login-button').click();
    await expect(page.getByTestId('login-error').textContent()).resolves.toMatch(/401/);
    await shot('login');
    await page.getByTestId('token-input').fill(ADMIN_TOKEN);
    await page.getByTestId('login-button').click();
    await page.getByTestId('sql-editor').waitFor();
    // The token lives in this tab's sessionStorage only, never in localStorage or a cookie.
    expect(await page.evaluate(() => [sessionStorage.getItem('svc.console.token'), JSON.stringify(localStorage).includes('svc_test'), (globalThis as unknown as { document: { cookie: string } }).document.cookie])).toEqual([ADMIN_TOKEN, false, '']);
  });

  test('a query shows its rows in the grid and a line chart; the editor highlights SQL', async () => {
    await runSql('SELECT time, celsius, humidity, room FROM webdb.temps ORDER BY time');
    await expect(page.getByTestId('query-status').textContent()).resolves.toBeTruthy();
    await page.getByTestId('result-table').locator('[data-row="0"]').waitFor();
    expect(await page.getByTestId('query-status').textContent()).toMatch(/^120 rows/);
    expect(await page.getByTestId('result-table').getAttribute('aria-rowcount')).toBe('120');
    const firstRow = await page.getByTestId('result-table').locator('[data-row="0"]').textContent();
    expect(firstRow).toContain('2024-01-01T00:00:00');
    expect(firstRow).toContain('lab');
    // uPlot draws on a canvas and names each series in its legend.
    await page.getByTestId('result-chart').locator('canvas').waitFor();
    expect(await page.getByTestId('result-chart').textContent()).toContain('humidity');
    expect(await page.locator('.sql-highlight .tok-keyword').first().textContent()).toBe('SELECT');
    await shot('query');
  });

  test('100k rows: the grid keeps only the rows in view in the DOM and scrolls to the last one', async () => {
    await runSql('SELECT range AS n, range * 0.5 AS half FROM range(100000) ORDER BY n');
    const grid = page.locator('[data-testid="result-table"][aria-rowcount="100000"]');
    await grid.locator('[data-row="0"]').waitFor();
    await grid.evaluate((el) => (el.scrollTop = el.scrollHeight));
    await grid.locator('[data-row="99999"]').waitFor();
    expect(await grid.locator('[data-row="99999"]').textContent()).toBe('9999949999.5');
    expect(await grid.locator('.grid-row').count()).toBeLessThan(100);
    await runSql('SELECT time, celsius, humidity, room FROM webdb.temps ORDER BY time');
    await page.getByTestId('result-chart').waitFor();
  });

  test('the result exports as CSV', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
    const text = readFileSync((await download.path())!, 'utf8');
    expect(text.split('\n')[0]).toBe('time,celsius,humidity,room');
    expect(text.trimEnd().split('\n')).toHaveLength(121);
  });

  test("a server error is shown with the server's message (Ctrl+Enter runs)", async () => {
    await runSql('SELECT no_such_column FROM webdb.temps', 'keys');
    const error = page.getByTestId('query-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/^400: .*no_such_column/);
    // The previous result is gone, so it cannot be read as this query's.
    expect(await page.getByTestId('result-table').count()).toBe(0);
    await shot('query-error');
  });

  test('a long query is cancelled: the page says so and the server stops it', async () => {
    const before = await queryErrors();
    await runSql('SELECT count(*) FROM range(100000000) a, range(100000) b WHERE a.range * b.range = 7');
    await expect(page.getByTestId('cancel-button').isEnabled()).resolves.toBe(true);
    await page.getByTestId('cancel-button').click();
    await page.getByTestId('query-cancelled').waitFor();
    // The server counts the cancelled statement as a query error once DuckDB stopped it.
    for (let i = 0; i < 200 && (await queryErrors()) <= before; i++) await Bun.sleep(50);
    expect(await queryErrors()).toBe(before + 1);
    expect(await page.getByTestId('run-button').isEnabled()).toBe(true);
  });

  test('the schema browser lists databases, measurements, columns and types, row count and time range', async () => {
    await page.getByTestId('nav-schema').click();
    const tree = page.getByTestId('schema-tree');
    await tree.locator('[data-database="webdb"] summary').click();
    await tree.locator('[data-measurement="temps"]').click();
    await expect(page.getByTestId('schema-row-count').textContent()).resolves.toBe('120');
    const columns = await page.getByTestId('schema-columns').locator('tbody tr').allTextContents();
    expect(columns).toContain('celsiusDOUBLE');
    expect(columns.some((c) => /^timeTIMESTAMP/.test(c))).toBe(true);
    expect(await page.getByTestId('schema-detail').textContent()).toContain('2024-01-01T01:59:00');
    await shot('schema');
  });

  test('a small CSV uploads with a progress bar and becomes queryable', async () => {
    await page.getByTestId('nav-write').click();
    const csv = 'time,site,level\n2024-02-01T00:00:00Z,north,1.5\n2024-02-01T00:01:00Z,south,2.5\n2024-02-01T00:02:00Z,north,3.5\n';
    await page.getByTestId('upload-file').setInputFiles({ name: 'levels.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    expect(await page.getByTestId('upload-format').inputValue()).toBe('csv');
    await page.getByTestId('upload-database').fill('webdb');
    await page.getByTestId('upload-measurement').fill('levels');
    await page.getByTestId('upload-button').click();
    await expect(page.getByTestId('upload-done').textContent()).resolves.toMatch(/Imported 3 rows into webdb\.levels/);
    expect(await page.getByTestId('upload-progress').getAttribute('value')).toBe('100');
    await shot('write');
    const r = await s.fetch('/api/v1/query', { method: 'POST', body: JSON.stringify({ sql: 'SELECT sum(level) AS s FROM webdb.levels' }) });
    expect(((await r.json()) as { data: unknown }).data).toEqual([[7.5]]);
  });

  test('the admin page shows tokens, compaction and the running queries, which it can cancel', async () => {
    // query_management is on by default: a query running now is listed, with a Cancel button that stops it.
    const sql = 'SELECT count(*) FROM range(100000000) a, range(100000) b WHERE a.range * b.range = 11';
    const running = s.fetch('/api/v1/query', { method: 'POST', body: JSON.stringify({ sql }) });
    await waitFor('the long query to be registered', async () => ((await (await s.fetch('/api/v1/queries/active')).json()) as { queries: { sql: string }[] }).queries.some((q) => q.sql.includes('range(100000000)')));
    await page.getByTestId('nav-admin').click();
    await expect(page.getByTestId('admin-tokens').locator('tbody').textContent()).resolves.toContain('memory-service');
    await page.getByTestId('admin-compaction').locator('dl').waitFor();
    const queries = page.getByTestId('admin-queries');
    await expect(queries.locator('table tbody').textContent()).resolves.toContain('range(100000000)');
    await queries.getByRole('button', { name: 'Cancel' }).click();
    expect((await running).status).not.toBe(200);
    // The query has ended: the panel, refreshed, lists none.
    await queries.getByRole('button', { name: 'Refresh' }).click();
    await queries.locator('p.muted:text("none")').waitFor();
    await page.getByTestId('token-name').fill('made-in-console');
    await page.getByRole('button', { name: 'Create token' }).click();
    expect(await page.getByTestId('token-created').textContent()).toMatch(/svc_/);
    await shot('admin');
  }, 60_000);

  test('the memory browser lists agents through the in-process memory service; a wrong memory key does not end the session', async () => {
    await page.getByTestId('nav-memory').click();
    await page.getByTestId('memory-key').fill('svcm_wrong_key_0123456789abcdefghijklmnopq');
    await page.getByRole('button', { name: 'Agents' }).click();
    await expect(page.getByTestId('memory-error').textContent()).resolves.toMatch(/^401/);
    await page.getByTestId('memory-key').fill(MEMORY_KEY);
    await page.getByRole('button', { name: 'Agents' }).click();
    await expect(page.locator('.memory-page table').textContent()).resolves.toContain('console-agent');
    await page.getByTestId('memory-search').fill('walrus');
    await page.getByRole('button', { name: 'Search' }).click();
    const results = page.getByTestId('memory-results').locator('tbody tr');
    await results.first().waitFor();
    expect(await results.allTextContents()).toEqual([expect.stringContaining('the walrus prefers cold water')]);
    await shot('memory');
  });

  test('a 401 returns to the login', async () => {
    await page.getByTestId('nav-query').click();
    await page.evaluate(() => sessionStorage.setItem('svc.console.token', 'svc_revoked_or_wrong_0123456789abcdefghijklm'));
    await runSql('SELECT 1');
    await page.getByTestId('token-input').waitFor();
    expect(await page.getByTestId('login-error').textContent()).toMatch(/401/);
    expect(pageErrors).toEqual([]);
  });
});

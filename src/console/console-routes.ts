/**
 * GET /console (the page), /console/assets/* (its script and styles), GET / (a browser is sent to the
 * console) and /console/memory/* (the in-process memory service, reached from the console's origin).
 * The page and its assets answer without credentials: they hold no data; every API call the page
 * makes carries the token the user typed.
 */
import { Hono } from 'hono';
import type { AppEnv } from '../http/index.ts';
import { consoleAssets } from './assets.ts';

/**
 * Scripts and styles from this origin only, no inline code, no eval, requests to this origin only,
 * never framed. uPlot sets element styles through the CSSOM, which style-src does not govern.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc console</title>
<link rel="stylesheet" href="/console/assets/app.css">
</head>
<body>
<div id="app"><noscript>The svc console needs JavaScript.</noscript></div>
<script type="module" src="/console/assets/app.js"></script>
</body>
</html>
`;

/** Forwards a request to the memory service's handler (in the same process). */
export type MemoryFetch = (req: Request) => Response | Promise<Response>;

/** The console's routes; mounted at `/` by main.ts when `console.enabled`. `memory` gives the memory service's handler once it runs. */
export function consoleRoutes(opts: { memory?: () => MemoryFetch | null } = {}) {
  const app = new Hono<AppEnv>();

  app.get('/', (c) => {
    if (!(c.req.header('accept') ?? '').includes('text/html')) return c.json({ error: 'no route for GET /: the web console is at /console' }, 404);
    return c.redirect('/console', 302);
  });
  app.get('/console', (c) => c.body(PAGE, 200, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8' }));
  app.get('/console/', (c) => c.redirect('/console', 301));
  app.get('/console/assets/app.js', async (c) => c.body((await consoleAssets()).js, 200, { ...SECURITY_HEADERS, 'content-type': 'text/javascript; charset=utf-8' }));
  app.get('/console/assets/app.css', async (c) => c.body((await consoleAssets()).css, 200, { ...SECURITY_HEADERS, 'content-type': 'text/css; charset=utf-8' }));

  // The memory service keeps its own keys: the page sends one as x-memory-key next to its token.
  app.all('/console/memory/*', async (c) => {
    const memory = opts.memory?.() ?? null;
    if (!memory) return c.json({ error: 'the memory service does not run in this process (memory.enabled is false)' }, 404);
    const url = new URL(c.req.url);
    url.pathname = url.pathname.slice('/console/memory'.length);
    const headers = new Headers(c.req.raw.headers);
    headers.delete('authorization');
    headers.delete('x-api-key');
    const key = c.req.header('x-memory-key');
    headers.delete('x-memory-key');
    if (key) headers.set('x-api-key', key);
    const method = c.req.method;
    const body = method === 'GET' || method === 'HEAD' ? undefined : await c.req.arrayBuffer();
    return memory(new Request(url.href, { method, headers, body }));
  });
  return app;
}

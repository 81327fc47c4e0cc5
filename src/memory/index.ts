import { Hono } from 'hono';
import { memoryHealthRoutes } from './http/health-routes.ts';
import type { SvcFetch } from './svc-client.ts';

export { svcFetch, type SvcFetch } from './svc-client.ts';

/** Builds the memory service's fetch handler. It reaches storage only through `svc` (the public HTTP API). */
export function createMemoryApp(deps: { svc: SvcFetch }) {
  const startedAt = Date.now();
  const app = new Hono();
  app.onError((err, c) => c.json({ error: 'internal', message: err.message }, 500));
  app.notFound((c) => c.json({ error: 'not_found', message: `no route for ${c.req.method} ${c.req.path}` }, 404));
  const pingStorage = async () => (await deps.svc(new Request('http://svc/health'))).ok;
  app.route('/', memoryHealthRoutes({ startedAt, pingStorage }));
  return app;
}

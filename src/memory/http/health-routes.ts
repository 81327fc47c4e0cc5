import { Hono } from 'hono';
import { formatUptime } from '../../lib/durations.ts';

/** Public /health and /ready of the memory service; /ready asks the time-series service. */
export function memoryHealthRoutes(deps: { startedAt: number; pingStorage: () => Promise<boolean> }) {
  const app = new Hono();
  app.get('/health', (c) => c.json({ status: 'ok', service: 'svc-memory', uptime: formatUptime(Date.now() - deps.startedAt) }));
  app.get('/ready', async (c) => {
    const ok = await deps.pingStorage().catch(() => false);
    return ok ? c.json({ status: 'ready', svc: 'connected' }) : c.json({ status: 'not ready', svc: 'disconnected' }, 503);
  });
  return app;
}

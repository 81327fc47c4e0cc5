import { Hono } from 'hono';
import { formatUptime } from '../../lib/durations.ts';
import type { Readiness } from '../../lib/readiness.ts';
import type { AppEnv } from '../context.ts';

/** Storage state per tier as /health shows it. */
export type StorageHealth = () => Record<string, { backend: string; credentials: string; state: string }>;

/** Write-buffer memory as /health shows it (see BufferSet.stats). */
export type BufferHealth = () => { buffered_bytes: number; max_buffered_bytes: number | null; buffered_records: number; failing: boolean; set_aside_batches: number };

/** GET /health (always 200) and GET /ready (503 while starting, stopping, or failing a readiness check). */
export function healthRoutes(deps: { readiness: Readiness; storageHealth: StorageHealth; bufferHealth?: BufferHealth }) {
  const app = new Hono<AppEnv>();
  const uptimeSec = () => Math.floor((Date.now() - deps.readiness.startedAt) / 1000);
  app.get('/health', (c) =>
    c.json({
      status: 'ok',
      time: new Date().toISOString(),
      uptime: formatUptime(Date.now() - deps.readiness.startedAt),
      uptime_sec: uptimeSec(),
      storage: deps.storageHealth(),
      ...(deps.bufferHealth ? { buffer: deps.bufferHealth() } : {}),
    }),
  );
  app.get('/ready', (c) => {
    const reason = deps.readiness.notReadyReason();
    const body = { status: reason ? 'not ready' : 'ready', time: new Date().toISOString(), uptime_sec: uptimeSec() };
    return reason ? c.json({ ...body, reason }, 503) : c.json(body);
  });
  return app;
}

import { Hono } from 'hono';
import { z } from 'zod';
import { LOG_LEVELS, type Logger } from '../../observability/index.ts';
import { readQuery } from '../body.ts';
import { wholeNumberParam } from '../query-params.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';

export const logsQuery = z.object({
  limit: wholeNumberParam(1, 1000).default(100),
  level: z
    .string()
    .transform((v) => v.trim().toLowerCase())
    .pipe(z.enum(LOG_LEVELS, { error: `must be one of ${[...LOG_LEVELS].reverse().join(', ')}` }))
    .optional(),
  since_minutes: wholeNumberParam(1, 1440, 'minutes').default(60),
});

/** GET /api/v1/logs (admin): buffered log entries, newest first, at or above `level`, from the last `since_minutes`. */
export function logsRoutes(logger: Logger): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/', requireAdmin, (c) => {
    const q = readQuery(c, logsQuery);
    const logs = logger.recent({ limit: q.limit, level: q.level, sinceMs: q.since_minutes * 60_000 }).reverse();
    return c.json({
      timestamp: new Date().toISOString(),
      count: logs.length,
      limit: q.limit,
      level_filter: q.level ?? null,
      since_minutes: q.since_minutes,
      logs,
    });
  });
  return app;
}

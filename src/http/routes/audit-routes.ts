/** Audit log (admin): events newest first with filters, and counts. */
import { Hono } from 'hono';
import { z } from 'zod';
import type { AuditLog } from '../../audit/index.ts';
import { readQuery } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';
import { wholeNumberParam } from '../query-params.ts';
import { timeParam } from '../time-param.ts';

export const logParams = z
  .object({
    limit: wholeNumberParam(1, 1000).default(100),
    since: z.string().optional(),
    until: z.string().optional(),
    token_id: z.string().min(1).optional(),
    action: z.string().min(1).optional(),
    method: z
      .string()
      .transform((m) => m.toUpperCase())
      .pipe(z.enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']))
      .optional(),
    status: wholeNumberParam(100, 599).optional(),
    path_prefix: z.string().min(1).optional(),
  })
  .strict();

/** /api/v1/audit: logs, stats. */
export function auditRoutes(audit: AuditLog) {
  const app = new Hono<AppEnv>();
  app.use('*', requireAdmin);
  app.get('/logs', (c) => {
    const p = readQuery(c, logParams);
    const events = audit.list({
      ...p,
      since: p.since === undefined ? undefined : timeParam('since', p.since),
      until: p.until === undefined ? undefined : timeParam('until', p.until),
    });
    return c.json({ events, count: events.length });
  });
  app.get('/stats', (c) => c.json(audit.stats()));
  return app;
}

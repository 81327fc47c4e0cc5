import { Hono } from 'hono';
import { z } from 'zod';
import { createCqBody, updateCqBody, type ContinuousQueryService } from '../../admin/index.ts';
import { invalid } from '../../lib/errors.ts';
import { readJson } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';
import { callerOf, historyLimit, idParam } from './lifecycle-params.ts';

const instant = z.union([z.string(), z.number()]);
/** Execute: optional window (`start_time`/`end_time`, or `start`/`end`: RFC 3339 or epoch ms; both or neither) and `dry_run`. */
export const executeBody = z.strictObject({
  start_time: instant.optional(),
  end_time: instant.optional(),
  start: instant.optional(),
  end: instant.optional(),
  dry_run: z.boolean().optional(),
});

function toMs(name: string, v: string | number): number {
  const ms = typeof v === 'number' ? v : /^-?\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(ms)) throw invalid(`${name}: expected an RFC 3339 timestamp or epoch milliseconds, got '${v}'`);
  return ms;
}

/**
 * /api/v1/continuous_queries (also mounted at /api/v1/continuous-queries): CRUD, execute now,
 * executions history. Reads need any valid token; mutating routes need an admin token.
 */
export function continuousQueryRoutes(cqs: ContinuousQueryService) {
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => (c.req.method === 'GET' ? next() : requireAdmin(c, next)));
  const id = (c: Parameters<typeof idParam>[0]) => idParam(c, 'continuous query');

  app.post('/', async (c) => c.json(await cqs.create(await readJson(c, createCqBody), callerOf(c)), 201));
  app.get('/', (c) => {
    const list = cqs.list(c.get('access'));
    return c.json({ continuous_queries: list, count: list.length });
  });
  app.get('/:id', (c) => c.json(cqs.get(id(c), c.get('access'))));
  app.put('/:id', async (c) => c.json(await cqs.update(id(c), await readJson(c, updateCqBody), callerOf(c))));
  app.delete('/:id', (c) => {
    const query = id(c);
    cqs.delete(query);
    return c.json({ message: `continuous query ${query} deleted`, id: query });
  });
  app.post('/:id/execute', async (c) => {
    const query = id(c);
    const b = await readJson(c, executeBody);
    const start = b.start_time ?? b.start;
    const end = b.end_time ?? b.end;
    if ((start === undefined) !== (end === undefined)) throw invalid('give both start_time and end_time, or neither (the last complete window)');
    const window = start !== undefined && end !== undefined ? { start: toMs('start_time', start), end: toMs('end_time', end) } : undefined;
    return c.json(await cqs.execute(query, { window, dryRun: b.dry_run }));
  });
  app.get('/:id/executions', (c) => {
    const executions = cqs.executions(id(c), historyLimit(c), c.get('access'));
    return c.json({ executions, count: executions.length });
  });
  return app;
}

/**
 * Query management (admin): running queries, the last finished ones, one query with its full SQL,
 * and cancel. The registry stops the query; the engine interrupts DuckDB (query/query-service.ts).
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { HISTORY_SIZE, QUERY_STATUSES, type QueryRecord, type QueryRegistry } from '../../governance/index.ts';
import { conflict, notFound } from '../../lib/errors.ts';
import { readQuery } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';
import { wholeNumberParam } from '../query-params.ts';
import { timeParam } from '../time-param.ts';

/** SQL shown in the list of running queries (GET /queries/:id has it whole). */
const SHORT_SQL = 200;

export const historyParams = z
  .object({
    limit: wholeNumberParam(1, HISTORY_SIZE).default(50),
    status: z.enum(QUERY_STATUSES).optional(),
    token_id: z.string().min(1).optional(),
    database: z.string().min(1).optional(),
    since: z.string().optional(),
  })
  .strict();

const short = (r: QueryRecord): QueryRecord => (r.sql.length > SHORT_SQL ? { ...r, sql: r.sql.slice(0, SHORT_SQL) } : r);

/** /api/v1/queries: active, history, :id, DELETE :id. */
export function queryManagementRoutes(registry: QueryRegistry) {
  const app = new Hono<AppEnv>();
  app.use('*', requireAdmin);
  app.get('/active', (c) => {
    const queries = registry.active().map(short);
    return c.json({ queries, count: queries.length });
  });
  app.get('/history', (c) => {
    const p = readQuery(c, historyParams);
    const since = p.since === undefined ? undefined : timeParam('since', p.since);
    const queries = registry.history({ ...p, since });
    return c.json({ queries, count: queries.length });
  });
  app.get('/:id', (c) => {
    const q = registry.get(c.req.param('id'));
    if (!q) throw notFound(`query '${c.req.param('id')}' not found`);
    return c.json(q);
  });
  app.delete('/:id', (c) => {
    const id = c.req.param('id');
    const p = c.get('principal');
    const outcome = registry.cancel(id, p ? `token '${p.name}'` : 'an operator');
    if (outcome === 'unknown') throw notFound(`query '${id}' not found`);
    if (outcome === 'finished') throw conflict(`query '${id}' already finished`);
    return c.json({ message: 'query cancelled', id });
  });
  return app;
}

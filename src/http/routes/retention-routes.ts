import { Hono } from 'hono';
import { createRetentionBody, updateRetentionBody, type RetentionService } from '../../admin/index.ts';
import { readJson } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';
import { callerOf, historyLimit, idParam } from './lifecycle-params.ts';

/**
 * /api/v1/retention: policies (CRUD), execute now, executions history. Reads need any valid token;
 * mutating routes (POST, PUT, DELETE, execute) need an admin token.
 */
export function retentionRoutes(retention: RetentionService) {
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => (c.req.method === 'GET' ? next() : requireAdmin(c, next)));
  const id = (c: Parameters<typeof idParam>[0]) => idParam(c, 'retention policy');

  app.post('/', async (c) => c.json(retention.create(await readJson(c, createRetentionBody), callerOf(c)), 201));
  app.get('/', (c) => {
    const policies = retention.list(c.get('access'));
    return c.json({ policies, count: policies.length });
  });
  app.get('/:id', (c) => c.json(retention.get(id(c), c.get('access'))));
  app.put('/:id', async (c) => c.json(retention.update(id(c), await readJson(c, updateRetentionBody), callerOf(c))));
  app.delete('/:id', (c) => {
    const policy = id(c);
    retention.delete(policy);
    return c.json({ message: `retention policy ${policy} deleted`, id: policy });
  });
  app.post('/:id/execute', async (c) => c.json(await retention.execute(id(c))));
  app.get('/:id/executions', (c) => {
    const executions = retention.executions(id(c), historyLimit(c), c.get('access'));
    return c.json({ executions, count: executions.length });
  });
  return app;
}

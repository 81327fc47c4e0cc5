import { Hono } from 'hono';
import { z } from 'zod';
import type { DatabaseService } from '../../admin/index.ts';
import { readJson } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin, requirePermission } from '../middleware/auth.ts';

export const createBody = z.object({ name: z.string({ error: 'name is required' }) });

/** /api/v1/databases: list, create, get, list measurements, drop (admin, delete.enabled, ?confirm=true). */
export function databaseRoutes(databases: DatabaseService) {
  const app = new Hono<AppEnv>();
  app.get('/', (c) => {
    const list = databases.list(c.get('access'));
    return c.json({ databases: list, count: list.length });
  });
  // Creating is not on the spec's admin-only list; any token that may write can create a database.
  app.post('/', requirePermission('write'), async (c) => {
    const { name } = await readJson(c, createBody);
    return c.json(databases.create(name, c.get('access')), 201);
  });
  app.get('/:name', (c) => c.json(databases.get(c.req.param('name'), c.get('access'))));
  app.get('/:name/measurements', (c) => {
    const name = c.req.param('name');
    const measurements = databases.measurements(name, c.get('access')).map((m) => ({ name: m }));
    return c.json({ database: name, measurements, count: measurements.length });
  });
  app.delete('/:name', requireAdmin, async (c) => c.json(await databases.drop(c.req.param('name'), c.req.query('confirm') === 'true', c.get('access'))));
  return app;
}

import { Hono } from 'hono';
import { filesQuery, migrateBody, policyBody, type TieringService } from '../../tiering/index.ts';
import { notFound } from '../../lib/errors.ts';
import { readJson, readQuery } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';

/**
 * /api/v1/tiering: status, files, stats, policies and migration jobs for any valid token, each holding
 * only what it may read; changes (policies, migrate, dry run included) need an admin token. A migration
 * answers 202 with its job id.
 */
export function tieringRoutes(tiering: TieringService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => (c.req.method === 'GET' ? next() : requireAdmin(c, next)));
  app.get('/status', (c) => c.json(tiering.status(c.get('access'))));
  app.get('/stats', (c) => c.json(tiering.stats(c.get('access'))));
  app.get('/files', (c) => c.json(tiering.files(readQuery(c, filesQuery), c.get('access'))));
  app.post('/migrate', async (c) => {
    const out = tiering.migrate(await readJson(c, migrateBody));
    return 'job_id' in out ? c.json(out, 202) : c.json(out);
  });
  app.get('/jobs/:id', (c) => c.json(tiering.job(c.req.param('id'), c.get('access'))));
  app.post('/policies', async (c) => c.json(tiering.createPolicy(await readJson(c, policyBody)), 201));
  app.get('/policies', (c) => {
    const policies = tiering.policies(c.get('access'));
    return c.json({ policies, count: policies.length });
  });
  app.get('/policies/:id', (c) => c.json(tiering.policy(c.req.param('id'), c.get('access'))));
  app.put('/policies/:id', async (c) => c.json(tiering.updatePolicy(c.req.param('id'), await readJson(c, policyBody))));
  app.delete('/policies/:id', (c) => {
    const id = c.req.param('id');
    tiering.deletePolicy(id);
    return c.json({ message: `tiering policy ${id} deleted`, id });
  });
  return app;
}

/** tiering.enabled = false: the status says so, every other route is a 404 naming the setting. */
export function tieringOffRoutes(hotBackend: string): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/status', (c) =>
    c.json({ enabled: false, hot_backend: hotBackend, cold_backend: null, running: false, last_run: null, next_run: null, last_result: null }),
  );
  app.all('*', () => {
    throw notFound('tiering is disabled (tiering.enabled = false)');
  });
  return app;
}

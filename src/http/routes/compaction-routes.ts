import { Hono, type Context } from 'hono';
import { candidatesQuery, historyQuery, triggerBody, type CompactionService, type Tier } from '../../admin/index.ts';
import { readJson, readQuery } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';

/**
 * /api/v1/compaction: status, stats, candidates, jobs and history for any valid token (listings hold only
 * what it may read); triggers (trigger, hourly, daily) need admin. A trigger starts a job in the background
 * and answers at once.
 */
export function compactionRoutes(compaction: CompactionService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/status', (c) => c.json(compaction.status()));
  app.get('/stats', (c) => c.json(compaction.stats()));
  app.get('/candidates', (c) => c.json(compaction.candidates(c.get('access'), readQuery(c, candidatesQuery))));
  app.get('/jobs', (c) => {
    const jobs = compaction.jobs(c.get('access'));
    return c.json({ jobs, count: jobs.length });
  });
  app.get('/history', (c) => {
    const history = compaction.history(readQuery(c, historyQuery).limit, c.get('access'));
    return c.json({ history, count: history.length });
  });
  const trigger = (tier: Tier) => async (c: Context<AppEnv>) => c.json(compaction.trigger(tier, await readJson(c, triggerBody)));
  app.post('/trigger', requireAdmin, trigger('all'));
  app.post('/hourly', requireAdmin, trigger('hourly'));
  app.post('/daily', requireAdmin, trigger('daily'));
  return app;
}

import { Hono } from 'hono';
import { createSubscriptionBody, updateSubscriptionBody, type MqttService } from '../../admin/index.ts';
import { readJson } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';

/**
 * /api/v1/mqtt: subscriptions, their transitions and statistics. Reads need any valid token (the auth
 * middleware); every mutating route needs an admin token, as for the other admin features.
 */
export function mqttRoutes(mqtt: MqttService) {
  const app = new Hono<AppEnv>();
  app.use('/subscriptions', async (c, next) => (c.req.method === 'GET' ? next() : requireAdmin(c, next)));
  app.use('/subscriptions/*', async (c, next) => (c.req.method === 'GET' ? next() : requireAdmin(c, next)));

  app.post('/subscriptions', async (c) => c.json(await mqtt.create(await readJson(c, createSubscriptionBody), c.get('access')), 201));
  app.get('/subscriptions', (c) => {
    const subscriptions = mqtt.list(c.get('access'));
    return c.json({ subscriptions, count: subscriptions.length });
  });
  app.get('/subscriptions/:id', (c) => (mqtt.assertVisible(c.req.param('id'), c.get('access')), c.json(mqtt.get(c.req.param('id')))));
  app.put('/subscriptions/:id', async (c) => c.json(await mqtt.update(c.req.param('id'), await readJson(c, updateSubscriptionBody), c.get('access'))));
  app.delete('/subscriptions/:id', async (c) => {
    const id = c.req.param('id');
    await mqtt.delete(id);
    return c.json({ id, message: 'subscription deleted' });
  });
  app.post('/subscriptions/:id/start', async (c) => c.json(await mqtt.start(c.req.param('id'))));
  app.post('/subscriptions/:id/stop', async (c) => c.json(await mqtt.stop(c.req.param('id'))));
  app.post('/subscriptions/:id/restart', async (c) => c.json(await mqtt.restart(c.req.param('id'))));
  app.get('/subscriptions/:id/stats', (c) => (mqtt.assertVisible(c.req.param('id'), c.get('access')), c.json(mqtt.statsOf(c.req.param('id')))));
  app.get('/stats', (c) => c.json(mqtt.allStats(c.get('access'))));
  app.get('/health', (c) => c.json(mqtt.health()));
  return app;
}

import { Hono } from 'hono';
import type { KeyService } from '../key-service.ts';
import type { MemoryEnv } from './env.ts';
import { requireAdmin } from './auth.ts';
import { keyCreateSchema } from './schemas.ts';
import { jsonBody, pathId } from './validate.ts';

/** `/api/v1/keys` (admin keys only, inside their own organization unless marked for every one): create (plaintext shown once), list, revoke. */
export function keyRoutes(keys: KeyService) {
  const app = new Hono<MemoryEnv>();
  app.use('*', requireAdmin());
  app.post('/', async (c) => {
    const { record, key } = keys.create(await jsonBody(c, keyCreateSchema), c.get('principal'));
    return c.json({ ...record, key }, 201);
  });
  app.get('/', (c) => {
    const list = keys.list(c.get('principal'));
    return c.json({ keys: list, count: list.length });
  });
  app.delete('/:id', (c) => {
    keys.revoke(pathId(c.req.param('id'), 'key id'), c.get('principal'));
    return c.body(null, 204);
  });
  return app;
}

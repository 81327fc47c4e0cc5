import { Hono } from 'hono';
import type { MemoryService } from '../memory-service.ts';
import type { MemoryEnv } from './env.ts';
import { listQuerySchema, memoryBatchSchema, memoryInputSchema } from './schemas.ts';
import { check, pathId, queryParams, readJson } from './validate.ts';

/** `/api/v1/memories`: create (single or `{memories: [...]}` batch), list, get, forget. */
export function memoryRoutes(memories: MemoryService) {
  const app = new Hono<MemoryEnv>();

  app.post('/', async (c) => {
    const org = c.get('principal').orgId;
    const body = await readJson(c);
    if (body !== null && typeof body === 'object' && 'memories' in body) {
      const batch = check(memoryBatchSchema, body);
      const r = await memories.createBatch(org, batch.memories);
      return c.json({ memories: r.created, duplicates: r.duplicates.map((d) => d.dedup_key), count: r.created.length }, 201);
    }
    return c.json(await memories.create(org, check(memoryInputSchema, body)), 201);
  });

  app.get('/', async (c) => {
    const q = queryParams(c, listQuerySchema);
    const page = await memories.list(
      {
        orgId: c.get('principal').orgId,
        agentId: q.agent_id,
        sessionId: q.session_id,
        memoryTypes: q.memory_type ? [q.memory_type] : undefined,
        eventTypes: q.event_type ? [q.event_type] : undefined,
        tags: q.tags,
        sinceUs: q.since,
        untilUs: q.until,
      },
      { order: q.order, limit: q.limit, offset: q.offset },
    );
    return c.json({ memories: page.memories, count: page.memories.length, has_more: page.has_more });
  });

  app.get('/:id', async (c) => c.json(await memories.get(c.get('principal').orgId, pathId(c.req.param('id'), 'memory id'))));

  app.delete('/:id', async (c) => {
    await memories.forget(c.get('principal').orgId, pathId(c.req.param('id'), 'memory id'));
    return c.body(null, 204);
  });
  return app;
}

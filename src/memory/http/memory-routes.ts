import { Hono } from 'hono';
import { z } from 'zod';
import type { MemoryService } from '../memory-service.ts';
import type { MemoryEnv } from './env.ts';
import { forgetSchema, listQuerySchema, memoryBatchSchema, memoryInputSchema, memoryPatchSchema } from './schemas.ts';
import { check, jsonBody, pathId, queryParams, readJson } from './validate.ts';

const deleteQuery = z.object({ purge: z.enum(['true', 'false'], { error: 'purge must be true or false' }).optional() });

/** `/api/v1/memories`: create (single or `{memories: [...]}` batch), list, get, change, history, forget, purge. */
export function memoryRoutes(memories: MemoryService) {
  const app = new Hono<MemoryEnv>();
  const org = (c: { get(k: 'principal'): { orgId: string } }) => c.get('principal').orgId;
  const id = (c: { req: { param(k: 'id'): string } }) => pathId(c.req.param('id'), 'memory id');

  app.post('/', async (c) => {
    const body = await readJson(c);
    if (body !== null && typeof body === 'object' && 'memories' in body) {
      const batch = check(memoryBatchSchema, body);
      const r = await memories.createBatch(org(c), batch.memories);
      return c.json({ memories: r.created, duplicates: r.duplicates.map((d) => d.dedup_key), count: r.created.length }, 201);
    }
    return c.json(await memories.create(org(c), check(memoryInputSchema, body)), 201);
  });

  app.post('/forget', async (c) => {
    const b = await jsonBody(c, forgetSchema);
    const forgotten = await memories.forgetMany(org(c), { agentId: b.agent_id, sessionId: b.session_id, tags: b.tags, beforeUs: b.before }, b.purge);
    return c.json({ forgotten, purged: b.purge });
  });

  app.get('/', async (c) => {
    const q = queryParams(c, listQuerySchema);
    const page = await memories.list(
      {
        orgId: org(c),
        agentId: q.agent_id,
        sessionId: q.session_id,
        memoryTypes: q.memory_type ? [q.memory_type] : undefined,
        eventTypes: q.event_type ? [q.event_type] : undefined,
        tags: q.tags,
        sinceUs: q.since,
        untilUs: q.until,
        parentId: q.parent_id,
        metadata: q.metadata,
      },
      { order: q.order, limit: q.limit, offset: q.offset },
    );
    return c.json({ memories: page.memories, count: page.memories.length, has_more: page.has_more });
  });

  app.get('/:id', async (c) => c.json(await memories.get(org(c), id(c))));
  app.get('/:id/history', async (c) => {
    const versions = await memories.history(org(c), id(c));
    return c.json({ memory_id: id(c), versions, count: versions.length });
  });
  app.patch('/:id', async (c) => c.json(await memories.patch(org(c), id(c), await jsonBody(c, memoryPatchSchema))));

  app.delete('/:id', async (c) => {
    const { purge } = queryParams(c, deleteQuery);
    if (purge === 'true') await memories.purge(org(c), id(c));
    else await memories.forget(org(c), id(c));
    return c.body(null, 204);
  });
  return app;
}

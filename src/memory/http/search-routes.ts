import { Hono } from 'hono';
import type { SearchService } from '../search-service.ts';
import type { MemoryEnv } from './env.ts';
import { searchSchema } from './schemas.ts';
import { jsonBody } from './validate.ts';

/** `POST /api/v1/search`: structured filters, optional full-text `query` (with `explain`, each score's parts). */
export function searchRoutes(search: SearchService) {
  const app = new Hono<MemoryEnv>();
  app.post('/', async (c) => {
    const started = performance.now();
    const b = await jsonBody(c, searchSchema, true);
    const results = await search.search(
      {
        orgId: c.get('principal').orgId,
        agentId: b.agent_id,
        sessionId: b.session_id,
        memoryTypes: b.memory_types,
        eventTypes: b.event_types,
        tags: b.tags,
        contentContains: b.content_contains || undefined,
        minImportance: b.min_importance,
        maxImportance: b.max_importance,
        sinceUs: b.since,
        untilUs: b.until,
        parentId: b.parent_id,
        metadata: b.metadata,
      },
      { order: b.order, limit: b.limit, offset: b.offset },
      b.query,
      b.explain,
    );
    const queryTimeMs = Math.round((performance.now() - started) * 100) / 100;
    return c.json({ results, count: results.length, query_time_ms: queryTimeMs });
  });
  return app;
}

import { Hono } from 'hono';
import { invalid } from '../../lib/errors.ts';
import type { SessionService } from '../session-service.ts';
import type { SessionRecord } from '../store/session-store.ts';
import type { MemoryEnv } from './env.ts';
import { contextSchema, sessionCreateSchema, sessionListSchema, sessionUpdateSchema } from './schemas.ts';
import { jsonBody, pathId, queryParams } from './validate.ts';

const full = ({ org_id: _org, ...s }: SessionRecord) => s;

/** `/api/v1/sessions`: create, list, get, PUT (close and/or metadata), context. */
export function sessionRoutes(sessions: SessionService) {
  const app = new Hono<MemoryEnv>();
  const org = (c: { get(k: 'principal'): { orgId: string } }) => c.get('principal').orgId;

  app.post('/', async (c) => {
    const s = sessions.create(org(c), await jsonBody(c, sessionCreateSchema));
    return c.json({ session_id: s.session_id, agent_id: s.agent_id, status: s.status, created_at: s.created_at, metadata: s.metadata }, 201);
  });
  app.get('/', (c) => {
    const { agent_id } = queryParams(c, sessionListSchema);
    const list = sessions.list(org(c), agent_id).map((s) => ({ session_id: s.session_id, agent_id: s.agent_id, status: s.status, created_at: s.created_at }));
    return c.json({ sessions: list, count: list.length });
  });
  app.get('/:id', (c) => c.json(full(sessions.get(org(c), pathId(c.req.param('id'), 'session id')))));
  app.put('/:id', async (c) => {
    const id = pathId(c.req.param('id'), 'session id');
    const patch = await jsonBody(c, sessionUpdateSchema);
    if (patch.status === undefined && patch.metadata === undefined) throw invalid('status or metadata is required');
    const s = sessions.update(org(c), id, patch);
    return c.json({ session_id: s.session_id, agent_id: s.agent_id, status: s.status, metadata: s.metadata, updated_at: s.updated_at });
  });
  app.post('/:id/context', async (c) => {
    const id = pathId(c.req.param('id'), 'session id');
    const b = await jsonBody(c, contextSchema, true);
    const ctx = await sessions.context(org(c), id, {
      sinceUs: b.since,
      untilUs: b.until,
      includeTypes: b.include_types,
      excludeTypes: b.exclude_types,
      maxTokens: b.max_tokens,
      order: b.order,
    });
    return c.json(ctx);
  });
  return app;
}

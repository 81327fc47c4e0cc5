import { Hono } from 'hono';
import type { AgentService } from '../agent-service.ts';
import type { MemoryEnv } from './env.ts';
import { agentCreateSchema } from './schemas.ts';
import { jsonBody, pathId } from './validate.ts';

/** `/api/v1/agents`: register, list, get, live stats, delete (memories stay). */
export function agentRoutes(agents: AgentService) {
  const app = new Hono<MemoryEnv>();
  const org = (c: { get(k: 'principal'): { orgId: string } }) => c.get('principal').orgId;

  app.post('/', async (c) => {
    const a = agents.create(org(c), await jsonBody(c, agentCreateSchema));
    return c.json({ agent_id: a.agent_id, name: a.name, description: a.description, config: a.config, created_at: a.created_at }, 201);
  });
  app.get('/', (c) => {
    const list = agents.list(org(c)).map((a) => ({ agent_id: a.agent_id, name: a.name, description: a.description, created_at: a.created_at }));
    return c.json({ agents: list, count: list.length });
  });
  app.get('/:id', (c) => {
    const { org_id: _org, ...agent } = agents.get(org(c), pathId(c.req.param('id'), 'agent id'));
    return c.json(agent);
  });
  app.get('/:id/stats', async (c) => c.json(await agents.stats(org(c), pathId(c.req.param('id'), 'agent id'))));
  app.delete('/:id', (c) => {
    agents.delete(org(c), pathId(c.req.param('id'), 'agent id'));
    return c.body(null, 204);
  });
  return app;
}

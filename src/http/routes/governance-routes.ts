/**
 * Governance (spec, "Enterprise endpoints"): policy CRUD (admin) and a token's usage (admin, or the
 * token itself). Bodies are strict: unknown fields, negative limits and unknown tokens are 400.
 */
import { Hono } from 'hono';
import { createPolicyBody, updatePolicyBody, type Governance, type PolicyBook } from '../../governance/index.ts';
import { forbidden } from '../../lib/errors.ts';
import { readJson } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';

/** /api/v1/governance: policies and usage. */
export function governanceRoutes(governance: Governance, policies: PolicyBook) {
  const app = new Hono<AppEnv>();
  app.post('/policies', requireAdmin, async (c) => c.json(policies.create(await readJson(c, createPolicyBody)), 201));
  app.get('/policies', requireAdmin, (c) => {
    const list = policies.list();
    return c.json({ policies: list, count: list.length });
  });
  app.get('/policies/:id', requireAdmin, (c) => c.json(policies.get(c.req.param('id'))));
  app.put('/policies/:id', requireAdmin, async (c) => c.json(policies.update(c.req.param('id'), await readJson(c, updatePolicyBody))));
  app.delete('/policies/:id', requireAdmin, (c) => {
    const p = policies.remove(c.req.param('id'));
    return c.json({ message: 'policy deleted', id: p.id });
  });
  app.get('/usage/:token_id', (c) => {
    const tokenId = c.req.param('token_id');
    const p = c.get('principal');
    if (p && !p.isAdmin && p.tokenId !== tokenId) throw forbidden("a token may read only its own usage (admin token required for another's)");
    return c.json(governance.report(tokenId));
  });
  return app;
}

import { Hono } from 'hono';
import { z } from 'zod';
import { extractToken, PERMISSIONS, type TokenRecord, type TokenService } from '../../auth/index.ts';
import { readJson } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';

const tokenName = z.string().trim().min(1, 'name must not be empty').max(128);
const permissions = z.array(z.enum(PERMISSIONS));

export const createBody = z.strictObject({
  name: tokenName,
  description: z.string().max(1024).optional(),
  is_admin: z.boolean().optional(),
  permissions: permissions.optional(),
  is_service: z.boolean().optional(),
});

export const patchBody = z.strictObject({
  name: tokenName.optional(),
  description: z.string().max(1024).optional(),
  is_admin: z.boolean().optional(),
  permissions: permissions.optional(),
  is_service: z.boolean().optional(),
});

/** The public view of a token: never its hash. */
export function tokenView(t: TokenRecord) {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    is_admin: t.isAdmin,
    is_service: t.isService,
    permissions: t.permissions,
    enabled: t.enabled,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    last_used_at: t.lastUsedAt,
  };
}

/** /api/v1/auth: verify (public), token management and cache routes (admin). */
export function authRoutes(tokens: TokenService) {
  const app = new Hono<AppEnv>();

  app.get('/verify', (c) => {
    const token = extractToken(c.req.raw.headers, null);
    const p = token ? tokens.verify(token) : null;
    if (!p) return c.json({ valid: false, error: token ? 'invalid or revoked token' : 'no token presented' }, 401);
    return c.json({
      valid: true,
      token_info: { id: p.tokenId, name: p.name, is_admin: p.isAdmin },
      permissions: p.permissions,
    });
  });

  app.use('/tokens', requireAdmin);
  app.use('/tokens/*', requireAdmin);
  app.use('/cache/*', requireAdmin);

  app.get('/tokens', (c) => {
    const list = tokens.list().map(tokenView);
    return c.json({ tokens: list, count: list.length });
  });
  app.post('/tokens', async (c) => {
    const body = await readJson(c, createBody);
    const { record, token } = tokens.create({ name: body.name, description: body.description, isAdmin: body.is_admin, permissions: body.permissions, isService: body.is_service });
    return c.json({ ...tokenView(record), token }, 201);
  });
  app.get('/tokens/:id', (c) => c.json(tokenView(tokens.get(c.req.param('id')))));
  app.patch('/tokens/:id', async (c) => {
    const body = await readJson(c, patchBody);
    const t = tokens.update(c.req.param('id'), { name: body.name, description: body.description, isAdmin: body.is_admin, permissions: body.permissions, isService: body.is_service });
    return c.json(tokenView(t));
  });
  app.delete('/tokens/:id', (c) => {
    tokens.delete(c.req.param('id'));
    return c.json({ message: 'token deleted', id: c.req.param('id') });
  });
  app.post('/tokens/:id/rotate', (c) => {
    const { record, token } = tokens.rotate(c.req.param('id'));
    return c.json({ ...tokenView(record), token, message: 'token rotated; the previous value no longer works' });
  });
  app.post('/tokens/:id/revoke', (c) => {
    const t = tokens.revoke(c.req.param('id'));
    return c.json({ ...tokenView(t), message: 'token revoked' });
  });
  app.get('/cache/stats', (c) => c.json(tokens.cacheStats()));
  app.post('/cache/invalidate', (c) => c.json({ message: 'token cache invalidated', entries_removed: tokens.invalidateCache() }));
  return app;
}

import type { MiddlewareHandler } from 'hono';
import { forbidden, unauthenticated } from '../../lib/errors.ts';
import type { KeyService } from '../key-service.ts';
import type { MemoryEnv } from './env.ts';

/** Requires a valid API key (`x-api-key` or `Authorization: Bearer`); sets `principal`. 401 otherwise. */
export function requireKey(keys: KeyService): MiddlewareHandler<MemoryEnv> {
  return async (c, next) => {
    const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
    const key = (c.req.header('x-api-key') ?? bearer ?? '').trim();
    if (!key) throw unauthenticated('missing API key: send x-api-key: <key> or Authorization: Bearer <key>');
    const principal = keys.verify(key);
    if (!principal) throw unauthenticated('invalid or revoked API key');
    c.set('principal', principal);
    c.set('apiKey', key);
    await next();
  };
}

/** Requires the authenticated key to be an admin key; 403 otherwise. */
export function requireAdmin(): MiddlewareHandler<MemoryEnv> {
  return async (c, next) => {
    if (!c.get('principal').isAdmin) throw forbidden('this route needs an admin API key');
    await next();
  };
}

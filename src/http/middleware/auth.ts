import type { MiddlewareHandler } from 'hono';
import { extractToken, mayDo, type TokenService } from '../../auth/index.ts';
import { forbidden, unauthenticated } from '../../lib/errors.ts';
import type { AppEnv } from '../context.ts';

/** Routes that answer without credentials (spec, Authentication rule 3). */
export function isPublicRoute(method: string, path: string): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  return (
    path === '/health' ||
    path === '/ready' ||
    path === '/openapi.json' ||
    path === '/metrics' ||
    path === '/api/v1/auth/verify' ||
    path === '/api/v1/metrics' ||
    path.startsWith('/api/v1/metrics/') ||
    // The web console's page and assets hold no data; a browser is sent from / to it.
    path === '/' ||
    path === '/console' ||
    path === '/console/' ||
    path.startsWith('/console/assets/')
  );
}

/** Routes where the token may also come as the `p` query parameter (InfluxDB 1.x clients). */
const QUERY_TOKEN_ROUTES = new Set(['/write', '/query']);

/** Sets `principal` from the credentials; 401 when missing or invalid (unless the route is public or auth is off). */
export function authenticate(tokens: TokenService, enabled: boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('principal', null);
    if (!enabled || isPublicRoute(c.req.method, c.req.path)) return next();
    const token = extractToken(c.req.raw.headers, QUERY_TOKEN_ROUTES.has(c.req.path) ? c.req.url : null);
    if (!token) throw unauthenticated('authentication required: send Authorization: Bearer <token>, Authorization: Token <token> or x-api-key');
    const principal = tokens.verify(token);
    if (!principal) throw unauthenticated('invalid or revoked token');
    c.set('principal', principal);
    return next();
  };
}

/** 403 unless the caller is an admin (passes through when auth is disabled). */
export const requireAdmin: MiddlewareHandler<AppEnv> = async (c, next) => {
  const p = c.get('principal');
  if (p && !p.isAdmin) throw forbidden('admin token required');
  return next();
};

/** 403 unless the caller may `permission` (admins may all; an empty permission list means read and write). */
export function requirePermission(permission: 'read' | 'write' | 'delete'): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const p = c.get('principal');
    if (p && !mayDo(p, permission)) throw forbidden(`token lacks '${permission}' permission`);
    return next();
  };
}

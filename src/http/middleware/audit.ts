import type { MiddlewareHandler } from 'hono';
import type { AuditLog } from '../../audit/index.ts';
import { clientIp } from '../client-ip.ts';
import type { AppEnv } from '../context.ts';

/**
 * Records the request in the audit log once it is answered (mounted before auth, so 401s are seen):
 * mutating requests, every 401 and 403, and with audit_log.include_reads every read.
 */
export function auditTrail(audit: AuditLog): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const status = c.res.status;
    if (!audit.wants(c.req.method, status, c.req.path)) return;
    const p = c.get('principal');
    audit.record({
      service: 'timeseries',
      timeMs: Date.now(),
      tokenId: p?.tokenId ?? null,
      tokenName: p?.name ?? null,
      clientIp: clientIp(c),
      method: c.req.method,
      path: c.req.path,
      status,
      durationMs: performance.now() - started,
      database: c.req.header('x-svc-database') || c.req.query('db') || c.req.query('database') || c.req.query('bucket') || null,
    });
  };
}

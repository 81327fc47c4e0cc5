import type { MiddlewareHandler } from 'hono';
import type { Logger, SvcMetrics } from '../../observability/index.ts';
import type { AppEnv } from '../context.ts';

/** Route group of a path, for latency histograms and /api/v1/metrics/endpoints (no per-route breakdown). */
export function routeGroupOf(path: string): string {
  if (path === '/write' || path.startsWith('/api/v2/write') || path.startsWith('/api/v1/write')) return 'write';
  if (path.startsWith('/api/v1/import')) return 'import';
  if (path === '/api/v1/query' || path.startsWith('/api/v1/query/') || path === '/api/v1/measurements') return 'query';
  if (path.startsWith('/api/v1/auth')) return 'auth';
  if (path === '/health' || path === '/ready') return 'health';
  if (path === '/metrics' || path.startsWith('/api/v1/metrics') || path.startsWith('/api/v1/logs')) return 'observability';
  if (path.startsWith('/api/wal')) return 'wal';
  const m = /^\/api\/v1\/([a-z_-]+)/.exec(path);
  return m ? m[1]!.replace(/-/g, '_') : 'other';
}

/** Counts requests and errors and observes latency per route group; logs one line per request at debug. */
export function requestMetrics(metrics: SvcMetrics, logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const start = performance.now();
    const group = routeGroupOf(c.req.path);
    c.set('routeGroup', group);
    try {
      await next();
    } finally {
      const seconds = (performance.now() - start) / 1000;
      const status = c.res.status;
      metrics.httpRequests.inc(1, { group });
      if (status >= 400) metrics.httpErrors.inc(1, { group });
      metrics.httpLatency.observe(seconds, { group });
      if (logger.enabled('debug'))
        logger.debug('request', { method: c.req.method, path: c.req.path, group, status, duration_ms: Math.round(seconds * 1e4) / 10 });
    }
  };
}

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

/** A route group's series, built once per group rather than once per request. */
interface GroupSeries {
  requests: { inc(n?: number): void };
  errors: { inc(n?: number): void };
  latency: { observe(v: number): void };
}

/** Counts requests and errors and observes latency per route group; logs one line per request at debug. */
export function requestMetrics(metrics: SvcMetrics, logger: Logger): MiddlewareHandler<AppEnv> {
  const groups = new Map<string, GroupSeries>();
  const seriesOf = (group: string): GroupSeries => {
    let s = groups.get(group);
    if (!s) {
      const labels = { group };
      s = { requests: metrics.httpRequests.labeled(labels), errors: metrics.httpErrors.labeled(labels), latency: metrics.httpLatency.labeled(labels) };
      groups.set(group, s);
    }
    return s;
  };
  return async (c, next) => {
    const start = performance.now();
    const group = routeGroupOf(c.req.path);
    c.set('routeGroup', group);
    try {
      await next();
    } finally {
      const seconds = (performance.now() - start) / 1000;
      const status = c.res.status;
      const series = seriesOf(group);
      series.requests.inc();
      if (status >= 400) series.errors.inc();
      series.latency.observe(seconds);
      if (logger.enabled('debug'))
        logger.debug('request', { method: c.req.method, path: c.req.path, group, status, duration_ms: Math.round(seconds * 1e4) / 10 });
    }
  };
}

import { Hono } from 'hono';
import { z } from 'zod';
import { invalid } from '../../lib/errors.ts';
import {
  HISTORY_TYPES,
  endpointsView,
  queryPoolView,
  type HistoryType,
  type MemoryDetail,
  type MetricsHistory,
  type SvcMetrics,
} from '../../observability/index.ts';
import { readQuery } from '../body.ts';
import { wholeNumberParam } from '../query-params.ts';
import type { AppEnv } from '../context.ts';

/** What the metrics routes read. */
export interface MetricsRouteDeps {
  metrics: SvcMetrics;
  history: MetricsHistory;
  /** Runtime and memory detail for /api/v1/metrics/memory. */
  memory: () => MemoryDetail;
}

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';
export const timeseriesQuery = z.object({ duration_minutes: wholeNumberParam(1, 1440, 'minutes').default(30) });

const now = () => new Date().toISOString();

/** GET /metrics (Prometheus text, JSON on Accept: application/json) and the public /api/v1/metrics* JSON routes. */
export function metricsRoutes(deps: MetricsRouteDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { metrics } = deps;

  app.get('/metrics', (c) => {
    if (c.req.header('accept')?.includes('application/json')) return c.json(metrics.registry.families());
    return c.body(metrics.registry.renderPrometheus(), 200, { 'content-type': PROMETHEUS_TEXT });
  });
  app.get('/api/v1/metrics', (c) => c.json({ timestamp: now(), ...metrics.registry.snapshot() }));
  app.get('/api/v1/metrics/memory', (c) => c.json({ timestamp: now(), ...deps.memory() }));
  app.get('/api/v1/metrics/query-pool', (c) => c.json({ timestamp: now(), ...queryPoolView(metrics) }));
  app.get('/api/v1/metrics/endpoints', (c) => c.json({ timestamp: now(), ...endpointsView(metrics) }));
  app.get('/api/v1/metrics/timeseries/:type', (c) => {
    const type = c.req.param('type');
    if (!(HISTORY_TYPES as readonly string[]).includes(type))
      throw invalid(`invalid metric type '${type}': must be one of ${HISTORY_TYPES.join(', ')}`, { valid_types: HISTORY_TYPES });
    const { duration_minutes } = readQuery(c, timeseriesQuery);
    const data = deps.history.recent(type as HistoryType, duration_minutes);
    return c.json({ timestamp: now(), type, duration_minutes, points_count: data.length, data });
  });
  return app;
}

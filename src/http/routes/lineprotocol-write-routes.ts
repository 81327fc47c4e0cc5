import { Hono } from 'hono';
import { ParsePool } from '../../ingest/index.ts';
import { unavailable } from '../../lib/errors.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';
import { DATABASE_RULES } from '../middleware/database.ts';
import { bufferStatsFor, ingestRoute, lineProtocolFormat, type WriteRouteDeps } from './ingest-route.ts';

/**
 * Line-protocol writes on `/write` (1.x), `/api/v2/write` (2.x) and `/api/v1/write/line-protocol`,
 * plus that last route's `/flush` (admin), `/stats` and `/health`. Mounted at `/`.
 */
export function lineProtocolWriteRoutes(deps: WriteRouteDeps & { flushTimeoutMs: number }) {
  const { metrics } = deps;
  const format = lineProtocolFormat(deps.parsePool ?? new ParsePool(0));
  const app = new Hono<AppEnv>();
  app.route('/write', ingestRoute(format, DATABASE_RULES.influxV1Write, deps));
  app.route('/api/v2/write', ingestRoute(format, DATABASE_RULES.influxV2Write, deps));
  app.route('/api/v1/write/line-protocol', ingestRoute(format, DATABASE_RULES.nativeWrite, deps));
  app.post('/api/v1/write/line-protocol/flush', requireAdmin, async (c) => {
    const done = await deps.buffers.flushAll(deps.flushTimeoutMs);
    if (!done) throw unavailable('cannot flush buffers: the flush did not finish in time; rows are kept and retried', 5);
    return c.json({ status: 'flushed', buffer: deps.buffers.stats() });
  });
  app.get('/api/v1/write/line-protocol/stats', (c) =>
    c.json({
      requests: metrics.lineprotocolRequests.total(),
      records: metrics.lineprotocolRecords.total(),
      rejected_lines: metrics.lineprotocolErrors.total(),
      buffer: bufferStatsFor(c, deps.buffers),
    }),
  );
  app.get('/api/v1/write/line-protocol/health', (c) => {
    const s = bufferStatsFor(c, deps.buffers);
    return c.json({
      status: s.failing ? 'degraded' : 'healthy',
      buffered_records: s.buffered_records + s.in_flight_records,
      buffered_bytes: s.buffered_bytes + s.in_flight_bytes,
      max_buffered_bytes: s.max_buffered_bytes,
      queue_depth: s.queue_depth,
      last_error: s.last_error,
    });
  });
  return app;
}

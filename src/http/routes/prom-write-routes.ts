/**
 * POST /api/v1/prom/write: Prometheus remote-write 1.0 (snappy + protobuf) through the shared write
 * path (names, WAL, buffer; 503 + Retry-After under backpressure, which Prometheus retries).
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { decodeRemoteWrite } from '../../ingest/index.ts';
import { AppError } from '../../lib/errors.ts';
import type { AppEnv } from '../context.ts';
import { requirePermission } from '../middleware/auth.ts';
import { database, DATABASE_RULES } from '../middleware/database.ts';
import type { WriteRouteDeps } from './ingest-route.ts';

/** Mounted at `/api/v1/prom`. The database is `db`, else x-svc-database, else `default`. */
export function promWriteRoutes(deps: WriteRouteDeps & { maxPayloadBytes: number }) {
  const app = new Hono<AppEnv>();
  const countErrors: MiddlewareHandler<AppEnv> = async (c, next) => {
    await next();
    if (c.error) deps.metrics.ingestErrors.inc();
  };
  // Snappy's block format has no magic bytes: the body middleware hands it over as received.
  app.post('/write', requirePermission('write'), countErrors, database(DATABASE_RULES.importWrite), deps.body, async (c) => {
    if (/io\.prometheus\.write\.v2/.test(c.req.header('content-type') ?? ''))
      throw new AppError('invalid', 'remote-write 2.0 is not supported: configure protobuf_message: prometheus.WriteRequest (1.0)');
    const parsed = decodeRemoteWrite(c.var.body, deps.maxPayloadBytes);
    const rows = await deps.writes.write(c.var.database!, parsed.batches, c.get('access'));
    deps.metrics.ingestBytes.inc(c.var.bodyBytes);
    deps.metrics.promSamples.inc(rows);
    return c.body(null, 204);
  });
  return app;
}

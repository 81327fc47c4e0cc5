/**
 * POST /api/v1/prom/write: Prometheus remote-write 1.0 (snappy + protobuf) through the shared write
 * path (names, WAL, buffer; 503 + Retry-After under backpressure, which Prometheus retries).
 */
import { Hono } from 'hono';
import { parseRemoteWrite, uncompressSnappy } from '../../ingest/index.ts';
import { AppError } from '../../lib/errors.ts';
import { assertDatabaseName } from '../../lib/names.ts';
import { readBytes } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requirePermission } from '../middleware/auth.ts';
import { limitBody } from '../middleware/body-limit.ts';
import type { WriteRouteDeps } from './msgpack-write-routes.ts';

/** Mounted at `/api/v1/prom`. The database is `db`, else x-svc-database, else `default`. */
export function promWriteRoutes(deps: WriteRouteDeps) {
  const app = new Hono<AppEnv>();
  app.post('/write', requirePermission('write'), limitBody(deps.maxPayloadBytes), async (c) => {
    try {
      if (/io\.prometheus\.write\.v2/.test(c.req.header('content-type') ?? ''))
        throw new AppError('invalid', 'remote-write 2.0 is not supported: configure protobuf_message: prometheus.WriteRequest (1.0)');
      const database = assertDatabaseName(c.req.query('db') || c.req.header('x-svc-database') || 'default');
      const raw = await readBytes(c);
      const parsed = parseRemoteWrite(uncompressSnappy(raw, deps.maxPayloadBytes));
      const rows = await deps.writes.write(database, parsed.batches);
      deps.metrics.ingestBytes.inc(raw.byteLength);
      deps.metrics.promSamples.inc(rows);
    } catch (err) {
      deps.metrics.ingestErrors.inc();
      throw err;
    }
    return c.body(null, 204);
  });
  return app;
}

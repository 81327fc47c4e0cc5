import { Hono } from 'hono';
import { columnMemory, ParsePool } from '../../ingest/index.ts';
import type { AppEnv } from '../context.ts';
import { DATABASE_RULES } from '../middleware/database.ts';
import { bufferStatsFor, ingestRoute, msgpackFormat, type WriteRouteDeps } from './ingest-route.ts';
import { MSGPACK_SPEC } from './msgpack-spec.ts';

/** /api/v1/write/msgpack: the columnar MessagePack write (204), its stats and its format description. */
export function msgpackWriteRoutes(deps: WriteRouteDeps) {
  const { metrics } = deps;
  const app = new Hono<AppEnv>();
  app.route('/', ingestRoute(msgpackFormat(deps.parsePool ?? new ParsePool(0)), DATABASE_RULES.nativeWrite, deps));
  app.get('/stats', (c) =>
    c.json({
      requests: metrics.msgpackRequests.total(),
      records: metrics.msgpackRecords.total(),
      errors: metrics.msgpackErrors.total(),
      buffer: bufferStatsFor(c, deps.buffers),
      column_memory: columnMemory.stats(),
    }),
  );
  app.get('/spec', (c) => c.json(MSGPACK_SPEC));
  return app;
}

import { Hono } from 'hono';
import type { BufferSet, WriteService } from '../../buffer/index.ts';
import { decompress, parseMsgpackWrite } from '../../ingest/index.ts';
import { assertDatabaseName } from '../../lib/names.ts';
import type { SvcMetrics } from '../../observability/index.ts';
import { readBytes } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requirePermission } from '../middleware/auth.ts';
import { limitBody } from '../middleware/body-limit.ts';
import { MSGPACK_SPEC } from './msgpack-spec.ts';

/** What the MessagePack write routes need. */
export interface WriteRouteDeps {
  writes: WriteService;
  buffers: BufferSet;
  metrics: SvcMetrics;
  maxPayloadBytes: number;
}

/** /api/v1/write/msgpack: the columnar MessagePack write (204), its stats and its format description. */
export function msgpackWriteRoutes(deps: WriteRouteDeps) {
  const { metrics } = deps;
  const app = new Hono<AppEnv>();
  app.post('/', requirePermission('write'), limitBody(deps.maxPayloadBytes), async (c) => {
    metrics.msgpackRequests.inc();
    try {
      const database = assertDatabaseName(c.req.header('x-svc-database') ?? 'default');
      const raw = await readBytes(c);
      const batches = parseMsgpackWrite(decompress(raw, deps.maxPayloadBytes), { now: Date.now() * 1000 });
      const rows = await deps.writes.write(database, batches, c.get('access'));
      metrics.msgpackRecords.inc(rows);
      metrics.ingestBytes.inc(raw.byteLength);
    } catch (err) {
      metrics.msgpackErrors.inc();
      metrics.ingestErrors.inc();
      throw err;
    }
    return c.body(null, 204);
  });
  app.get('/stats', (c) =>
    c.json({
      requests: metrics.msgpackRequests.total(),
      records: metrics.msgpackRecords.total(),
      errors: metrics.msgpackErrors.total(),
      buffer: deps.buffers.stats(),
    }),
  );
  app.get('/spec', (c) => c.json(MSGPACK_SPEC));
  return app;
}

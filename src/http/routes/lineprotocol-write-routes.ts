import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { decompress, parseLineProtocol, type Precision } from '../../ingest/index.ts';
import { invalid, unavailable } from '../../lib/errors.ts';
import { assertDatabaseName } from '../../lib/names.ts';
import { readBytes, readQuery } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin, requirePermission } from '../middleware/auth.ts';
import { limitBody } from '../middleware/body-limit.ts';
import type { WriteRouteDeps } from './msgpack-write-routes.ts';

/** InfluxDB clients send 1.x spellings (`n`, `u`); hours and minutes have no precision here. */
const PRECISION_ALIASES: Record<string, Precision> = { ns: 'ns', n: 'ns', us: 'us', u: 'us', 'µs': 'us', ms: 'ms', s: 's' };
const precisionParam = z
  .string()
  .optional()
  .transform((p, ctx) => {
    const v = PRECISION_ALIASES[p ?? 'ns'];
    if (!v) ctx.addIssue({ code: 'custom', message: `unknown precision '${p}' (use ns, us, ms or s)` });
    return v ?? 'ns';
  });
const v1Query = z.object({ db: z.string().optional(), precision: precisionParam }).loose();
const v2Query = z.object({ bucket: z.string().optional(), precision: precisionParam }).loose();
const nativeQuery = z.object({ precision: precisionParam }).loose();

/**
 * Line-protocol writes on `/write` (1.x), `/api/v2/write` (2.x) and `/api/v1/write/line-protocol`,
 * plus that last route's `/flush` (admin), `/stats` and `/health`. Mounted at `/`.
 */
export function lineProtocolWriteRoutes(deps: WriteRouteDeps & { flushTimeoutMs: number }) {
  const { metrics } = deps;
  const app = new Hono<AppEnv>();
  const write = async (c: Context<AppEnv>, database: string | undefined, precision: Precision) => {
    metrics.lineprotocolRequests.inc();
    try {
      if (!database) throw invalid('database is required: pass db (or bucket on /api/v2/write) or the x-svc-database header');
      assertDatabaseName(database);
      const raw = await readBytes(c);
      const parsed = parseLineProtocol(decompress(raw, deps.maxPayloadBytes), { precision, now: Date.now() * 1000 });
      const written = await deps.writes.write(database, parsed.batches, c.get('access'));
      metrics.lineprotocolRecords.inc(written);
      metrics.ingestBytes.inc(raw.byteLength);
      if (parsed.rejected > 0) {
        metrics.lineprotocolErrors.inc(parsed.rejected);
        const first = parsed.errors[0]!;
        const outcome = written > 0 ? `partial write: ${written} points written, ${parsed.rejected} lines rejected` : 'nothing written';
        throw invalid(`${outcome}; first bad line ${first.line}: ${first.message}`, { line: first.line, written, rejected: parsed.rejected });
      }
    } catch (err) {
      metrics.ingestErrors.inc();
      throw err;
    }
    return c.body(null, 204);
  };
  const limits = [requirePermission('write'), limitBody(deps.maxPayloadBytes)] as const;
  app.post('/write', ...limits, (c) => {
    const q = readQuery(c, v1Query);
    return write(c, q.db || c.req.header('x-svc-database'), q.precision);
  });
  app.post('/api/v2/write', ...limits, (c) => {
    const q = readQuery(c, v2Query);
    // 1.8-style buckets are `db/retention-policy`; the retention policy is ignored.
    return write(c, q.bucket?.split('/')[0] || c.req.header('x-svc-database'), q.precision);
  });
  app.post('/api/v1/write/line-protocol', ...limits, (c) => write(c, c.req.header('x-svc-database') ?? 'default', readQuery(c, nativeQuery).precision));
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
      buffer: deps.buffers.stats(),
    }),
  );
  app.get('/api/v1/write/line-protocol/health', (c) => {
    const s = deps.buffers.stats();
    return c.json({ status: s.failing ? 'degraded' : 'healthy', buffered_records: s.buffered_records + s.in_flight_records, queue_depth: s.queue_depth, last_error: s.last_error });
  });
  return app;
}

/**
 * POST /api/v1/prom/write: Prometheus remote-write 1.0 and 2.0 (snappy + protobuf) through the shared
 * write path (names, WAL, buffer; 503 + Retry-After under backpressure, which Prometheus retries).
 * The message is chosen by Content-Type's `proto` parameter, as the 2.0 spec asks of a receiver
 * serving both on one URL; what it cannot read is 415, so a 2.0 sender can fall back to 1.0.
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { decodeRemoteWrite, decodeRemoteWriteV2, type RemoteWriteV2Result } from '../../ingest/index.ts';
import { AppError } from '../../lib/errors.ts';
import type { AppEnv } from '../context.ts';
import { requirePermission } from '../middleware/auth.ts';
import { database, DATABASE_RULES } from '../middleware/database.ts';
import type { WriteRouteDeps } from './ingest-route.ts';

const V1 = 'prometheus.WriteRequest';
const V2 = 'io.prometheus.write.v2.Request';

const unsupported = (msg: string) => new AppError('unsupported_media_type', msg);

/** The protobuf message of the request: 1.0 without a `proto` parameter (what 1.0 senders send). */
function protoOf(c: Context<AppEnv>): typeof V1 | typeof V2 {
  const encoding = c.req.header('content-encoding');
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'snappy')
    throw unsupported(`cannot accept remote-write Content-Encoding '${encoding}': only snappy is supported`);
  const version = c.req.header('x-prometheus-remote-write-version');
  if (version !== undefined && !/^\s*(0\.1|[12])(\.\d+)*\s*$/.test(version))
    throw unsupported(`cannot accept X-Prometheus-Remote-Write-Version '${version}': supported are 0.1.0 (1.0) and 2.x`);
  const type = c.req.header('content-type');
  if (type === undefined) return V1;
  const [media = '', ...params] = type.split(';');
  // application/x-protobuf is what the spec allows; octet-stream is what generic HTTP clients put on bytes.
  if (!['application/x-protobuf', 'application/octet-stream', ''].includes(media.trim().toLowerCase()))
    throw unsupported(`cannot accept remote-write Content-Type '${type}': send application/x-protobuf`);
  const proto = params.map((p) => p.trim().match(/^proto\s*=\s*"?([^"]*)"?$/i)?.[1]).find((p) => p !== undefined);
  if (proto === undefined || proto === V1) return V1;
  if (proto === V2) return V2;
  throw unsupported(`cannot accept remote-write message '${proto}': send proto=${V2} (2.0) or ${V1} (1.0)`);
}

/** Mounted at `/api/v1/prom`. The database is `db`, else x-svc-database, else `default`. */
export function promWriteRoutes(deps: WriteRouteDeps & { maxPayloadBytes: number }) {
  const app = new Hono<AppEnv>();
  const countErrors: MiddlewareHandler<AppEnv> = async (c, next) => {
    await next();
    if (c.error) deps.metrics.ingestErrors.inc();
  };
  // Snappy's block format has no magic bytes: the body middleware hands it over as received.
  app.post('/write', requirePermission('write'), countErrors, database(DATABASE_RULES.importWrite), deps.body, async (c) => {
    const v2 = protoOf(c) === V2;
    const parsed = v2 ? decodeRemoteWriteV2(c.var.body, deps.maxPayloadBytes) : decodeRemoteWrite(c.var.body, deps.maxPayloadBytes);
    const rows = await deps.writes.write(c.var.database!, parsed.batches, c.get('access'));
    deps.metrics.ingestBytes.inc(c.var.bodyBytes);
    deps.metrics.promSamples.inc(rows);
    if (v2) {
      // What 2.0 senders check: accepted counts (stale markers are accepted and dropped by design;
      // exemplars are never stored, so none is reported written).
      c.header('X-Prometheus-Remote-Write-Samples-Written', String(parsed.samples + parsed.staleDropped));
      c.header('X-Prometheus-Remote-Write-Histograms-Written', String((parsed as RemoteWriteV2Result).histograms));
      c.header('X-Prometheus-Remote-Write-Exemplars-Written', '0');
    }
    return c.body(null, 204);
  });
  return app;
}

/**
 * The write routes' one handler: permission, database, body (capped, decompressed), then the
 * format's parser and the write service. Routes differ only in their format (parser + counters).
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import type { BufferSet, WriteService } from '../../buffer/index.ts';
import type { ColumnBatch, ParsePool, Precision } from '../../ingest/index.ts';
import { invalid } from '../../lib/errors.ts';
import { errorFor } from '../../lib/table-access.ts';
import type { SvcMetrics } from '../../observability/index.ts';
import type { AppEnv } from '../context.ts';
import { requirePermission } from '../middleware/auth.ts';
import { database, type DatabaseRule } from '../middleware/database.ts';
import { cachedQueryReader } from '../query-cache.ts';

/** What the write routes need; `body` is the request-body middleware built once in main.ts. */
export interface WriteRouteDeps {
  writes: WriteService;
  buffers: BufferSet;
  metrics: SvcMetrics;
  body: MiddlewareHandler<AppEnv>;
  /** Parses large line-protocol and MessagePack bodies off the event loop (absent: parsed in place). */
  parsePool?: ParsePool;
}

/** The buffers' stats as the caller may see them: the last flush error names a file of any database (lib's errorFor). */
export function bufferStatsFor(c: Context<AppEnv>, buffers: BufferSet): ReturnType<BufferSet['stats']> {
  const s = buffers.stats();
  return { ...s, last_error: errorFor(c.get('access'), s.last_error) };
}

/** A parser's answer: the batches to write and the first of the records it refused. */
export interface ParsedWrite {
  batches: ColumnBatch[];
  rejected: number;
  firstError?: { line: number; message: string };
}

/** One write format: its parser and its counters. */
export interface IngestFormat {
  /** Name of a record in error messages (`points`, `element sets`). */
  records: string;
  parse(body: Uint8Array, c: Context<AppEnv>): ParsedWrite | Promise<ParsedWrite>;
  counters(metrics: SvcMetrics): { requests: Counts; records: Counts; failedRequests?: Counts; rejectedRecords?: Counts };
}

interface Counts {
  inc(n?: number): void;
}

/** InfluxDB clients send 1.x spellings (`n`, `u`); hours and minutes have no precision here. */
const PRECISION_ALIASES: Record<string, Precision> = { ns: 'ns', n: 'ns', us: 'us', u: 'us', 'µs': 'us', ms: 'ms', s: 's' };
export const precisionQuery = z
  .object({
    precision: z
      .string()
      .optional()
      .transform((p, ctx) => {
        const v = PRECISION_ALIASES[p ?? 'ns'];
        if (!v) ctx.addIssue({ code: 'custom', message: `unknown precision '${p}' (use ns, us, ms or s)` });
        return v ?? 'ns';
      }),
  })
  .loose();

/** Line protocol (`precision` query parameter), parsed by `pool`; bad lines are reported, good ones written. */
export function lineProtocolFormat(pool: ParsePool): IngestFormat {
  const readPrecision = cachedQueryReader(precisionQuery);
  return {
    records: 'points',
    async parse(body, c) {
      const { precision } = readPrecision(c);
      const parsed = await pool.parseLineProtocol(body, { precision, now: Date.now() * 1000 });
      return { batches: parsed.batches, rejected: parsed.rejected, firstError: parsed.errors[0] };
    },
    counters: (m) => ({ requests: m.lineprotocolRequests, records: m.lineprotocolRecords, rejectedRecords: m.lineprotocolErrors }),
  };
}

/** Columnar MessagePack, parsed by `pool`: all or nothing. */
export function msgpackFormat(pool: ParsePool): IngestFormat {
  return {
    records: 'records',
    parse: async (body) => ({ batches: await pool.parseMsgpack(body, Date.now() * 1000), rejected: 0 }),
    counters: (m) => ({ requests: m.msgpackRequests, records: m.msgpackRecords, failedRequests: m.msgpackErrors }),
  };
}

/**
 * A router with one `POST /` (mount it at the route's path): 204 when every record was written,
 * 400 naming the first bad record otherwise. Refused requests count as errors, whatever refused them.
 */
export function ingestRoute(format: IngestFormat, rule: DatabaseRule, deps: WriteRouteDeps): Hono<AppEnv> {
  const counts = format.counters(deps.metrics);
  const counted: MiddlewareHandler<AppEnv> = async (c, next) => {
    counts.requests.inc();
    await next();
    if (c.error) {
      counts.failedRequests?.inc();
      deps.metrics.ingestErrors.inc();
    }
  };
  const app = new Hono<AppEnv>();
  app.post('/', requirePermission('write'), counted, database(rule), deps.body, async (c) => {
    const parsed = await format.parse(c.var.body, c);
    const written = await deps.writes.write(c.var.database!, parsed.batches, c.get('access'));
    counts.records.inc(written);
    deps.metrics.ingestBytes.inc(c.var.bodyBytes);
    if (parsed.rejected > 0) {
      counts.rejectedRecords?.inc(parsed.rejected);
      const first = parsed.firstError!;
      const outcome = written > 0 ? `partial write: ${written} ${format.records} written, ${parsed.rejected} lines rejected` : 'nothing written';
      throw invalid(`${outcome}; first bad line ${first.line}: ${first.message}`, { line: first.line, written, rejected: parsed.rejected });
    }
    return c.body(null, 204);
  });
  return app;
}

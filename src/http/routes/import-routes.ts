import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { IMPORT_MAX_BYTES, type ImportFormatOptions, type ImportService } from '../../admin/index.ts';
import type { WriteService } from '../../buffer/index.ts';
import { parseTle, TIME_FORMATS, type Precision } from '../../ingest/index.ts';
import { invalid, tooLarge } from '../../lib/errors.ts';
import { formatSize } from '../../lib/sizes.ts';
import type { SvcMetrics } from '../../observability/index.ts';
import { readQuery } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requirePermission } from '../middleware/auth.ts';
import { database, DATABASE_RULES } from '../middleware/database.ts';
import { wholeNumberParam } from '../query-params.ts';

/** What the import routes need. */
export interface ImportRouteDeps {
  imports: ImportService;
  writes: WriteService;
  metrics: SvcMetrics;
  /** The request-body middleware (server.max_payload_size, in-flight budget) of /api/v1/write/tle. */
  body: MiddlewareHandler<AppEnv>;
  /** Import body limit (default 500 MB). */
  importMaxBytes?: number;
}

const PRECISIONS: Record<string, Precision> = { ns: 'ns', n: 'ns', us: 'us', u: 'us', 'µs': 'us', ms: 'ms', s: 's' };
const name = z.string().min(1);
const common = { db: z.string().optional(), measurement: name };
const timeOptions = { time_column: name.default('time'), time_format: z.enum(TIME_FORMATS).optional() };
export const csvQuery = z.object({
  ...common,
  ...timeOptions,
  delimiter: z
    .string()
    .default(',')
    // `\t` and `tab` spell a tab in a URL more easily than %09.
    .transform((d) => (d === '\\t' || d.toLowerCase() === 'tab' ? '\t' : d))
    .refine((d) => [...d].length === 1 && d !== '"' && d !== '\n' && d !== '\r', 'must be one character other than a quote or a line break'),
  skip_rows: wholeNumberParam(0, 1_000_000).optional(),
});
export const parquetQuery = z.object({ ...common, ...timeOptions });
const precision = z
  .string()
  .default('ns')
  .transform((p, ctx) => PRECISIONS[p] ?? (ctx.addIssue({ code: 'custom', message: `unknown precision '${p}' (use ns, us, ms or s)` }), 'ns'));
export const lpQuery = z.object({ db: z.string().optional(), precision });
export const tleQuery = z.object({ db: z.string().optional(), measurement: name.default('tle') });

/** 413 before reading when the declared length is over the limit; bodies without a length are counted while spooled. */
function declaredLimit(maxBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const declared = Number(c.req.header('content-length') ?? 0);
    if (declared > maxBytes) throw tooLarge(`import body is larger than ${formatSize(maxBytes)}`);
    return next();
  };
}

/**
 * POST /api/v1/import/{csv,parquet,lp,tle} (all or nothing, JSON import result) and
 * POST /api/v1/write/tle (streaming element sets; good sets are written, bad ones reported). Mounted at `/`.
 */
export function importRoutes(deps: ImportRouteDeps) {
  const app = new Hono<AppEnv>();
  const importGuards = [requirePermission('write'), declaredLimit(deps.importMaxBytes ?? IMPORT_MAX_BYTES), database(DATABASE_RULES.importWrite)] as const;
  const run = async (c: Context<AppEnv>, opts: ImportFormatOptions) =>
    c.json(await deps.imports.run({ ...opts, database: c.var.database!, access: c.get('access'), body: c.req.raw.body, contentType: c.req.header('content-type') }));

  app.post('/api/v1/import/csv', ...importGuards, (c) => {
    const q = readQuery(c, csvQuery);
    const csv = { timeColumn: q.time_column, timeFormat: q.time_format ?? null, delimiter: q.delimiter, skipRows: q.skip_rows ?? 0 };
    return run(c, { format: 'csv', measurement: q.measurement, csv });
  });
  app.post('/api/v1/import/parquet', ...importGuards, (c) => {
    const q = readQuery(c, parquetQuery);
    const parquet = { timeColumn: q.time_column, timeFormat: q.time_format ?? null };
    return run(c, { format: 'parquet', measurement: q.measurement, parquet });
  });
  app.post('/api/v1/import/lp', ...importGuards, (c) => {
    const q = readQuery(c, lpQuery);
    return run(c, { format: 'lp', precision: q.precision });
  });
  app.post('/api/v1/import/tle', ...importGuards, (c) => {
    const q = readQuery(c, tleQuery);
    return run(c, { format: 'tle', measurement: q.measurement });
  });

  // Like line protocol: good element sets are written, bad ones reported (partial success).
  const countErrors: MiddlewareHandler<AppEnv> = async (c, next) => {
    await next();
    if (c.error) deps.metrics.ingestErrors.inc();
  };
  app.post('/api/v1/write/tle', requirePermission('write'), countErrors, database(DATABASE_RULES.importWrite), deps.body, async (c) => {
    const q = readQuery(c, tleQuery);
    deps.metrics.ingestBytes.inc(c.var.bodyBytes);
    const parsed = parseTle(new TextDecoder().decode(c.var.body), q.measurement);
    const written = await deps.writes.write(c.var.database!, parsed.batch.length > 0 ? [parsed.batch] : [], c.get('access'));
    if (parsed.rejected === 0 && written === 0) throw invalid('cannot write TLE: the body has no element sets');
    if (parsed.rejected > 0) {
      const first = parsed.errors[0]!;
      const outcome = written > 0 ? `partial write: ${written} element sets written, ${parsed.rejected} rejected` : `nothing written: ${parsed.rejected} element sets rejected`;
      throw invalid(`${outcome}; first bad set at line ${first.line}: ${first.message}`, { written, rejected: parsed.rejected, errors: parsed.errors });
    }
    return c.body(null, 204);
  });
  return app;
}

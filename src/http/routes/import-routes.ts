import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { IMPORT_MAX_BYTES, type ImportFormatOptions, type ImportService } from '../../admin/index.ts';
import type { WriteService } from '../../buffer/index.ts';
import { decompress, parseTle, TIME_FORMATS, type Precision } from '../../ingest/index.ts';
import { invalid, tooLarge } from '../../lib/errors.ts';
import { assertDatabaseName } from '../../lib/names.ts';
import { formatSize } from '../../lib/sizes.ts';
import type { SvcMetrics } from '../../observability/index.ts';
import { readBytes, readQuery } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requirePermission } from '../middleware/auth.ts';
import { limitBody } from '../middleware/body-limit.ts';
import { wholeNumberParam } from '../query-params.ts';

/** What the import routes need. */
export interface ImportRouteDeps {
  imports: ImportService;
  writes: WriteService;
  metrics: SvcMetrics;
  /** server.max_payload_size: the limit of the streaming /api/v1/write/tle route. */
  maxPayloadBytes: number;
  /** Import body limit (default 500 MB). */
  importMaxBytes?: number;
}

const PRECISIONS: Record<string, Precision> = { ns: 'ns', n: 'ns', us: 'us', u: 'us', 'µs': 'us', ms: 'ms', s: 's' };
const name = z.string().min(1);
const common = { db: z.string().optional(), measurement: name };
const timeOptions = { time_column: name.default('time'), time_format: z.enum(TIME_FORMATS).optional() };
const csvQuery = z.object({
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
const parquetQuery = z.object({ ...common, ...timeOptions });
const precision = z
  .string()
  .default('ns')
  .transform((p, ctx) => PRECISIONS[p] ?? (ctx.addIssue({ code: 'custom', message: `unknown precision '${p}' (use ns, us, ms or s)` }), 'ns'));
const lpQuery = z.object({ db: z.string().optional(), precision });
const tleQuery = z.object({ db: z.string().optional(), measurement: name.default('tle') });

/** The database: `db`, else the x-svc-database header, else `default` (as on the other native write routes). */
const databaseOf = (c: Context<AppEnv>, db: string | undefined) => assertDatabaseName(db || c.req.header('x-svc-database') || 'default');

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
  const importGuards = [requirePermission('write'), declaredLimit(deps.importMaxBytes ?? IMPORT_MAX_BYTES)] as const;
  const run = async (c: Context<AppEnv>, database: string, opts: ImportFormatOptions) =>
    c.json(await deps.imports.run({ ...opts, database, access: c.get('access'), body: c.req.raw.body, contentType: c.req.header('content-type') }));

  app.post('/api/v1/import/csv', ...importGuards, (c) => {
    const q = readQuery(c, csvQuery);
    const csv = { timeColumn: q.time_column, timeFormat: q.time_format ?? null, delimiter: q.delimiter, skipRows: q.skip_rows ?? 0 };
    return run(c, databaseOf(c, q.db), { format: 'csv', measurement: q.measurement, csv });
  });
  app.post('/api/v1/import/parquet', ...importGuards, (c) => {
    const q = readQuery(c, parquetQuery);
    const parquet = { timeColumn: q.time_column, timeFormat: q.time_format ?? null };
    return run(c, databaseOf(c, q.db), { format: 'parquet', measurement: q.measurement, parquet });
  });
  app.post('/api/v1/import/lp', ...importGuards, (c) => {
    const q = readQuery(c, lpQuery);
    return run(c, databaseOf(c, q.db), { format: 'lp', precision: q.precision });
  });
  app.post('/api/v1/import/tle', ...importGuards, (c) => {
    const q = readQuery(c, tleQuery);
    return run(c, databaseOf(c, q.db), { format: 'tle', measurement: q.measurement });
  });

  // Like line protocol: good element sets are written, bad ones reported (partial success).
  app.post('/api/v1/write/tle', requirePermission('write'), limitBody(deps.maxPayloadBytes), async (c) => {
    try {
      const q = readQuery(c, tleQuery);
      const database = databaseOf(c, q.db);
      const raw = await readBytes(c);
      deps.metrics.ingestBytes.inc(raw.byteLength);
      const parsed = parseTle(new TextDecoder().decode(decompress(raw, deps.maxPayloadBytes)), q.measurement);
      const written = await deps.writes.write(database, parsed.batch.length > 0 ? [parsed.batch] : [], c.get('access'));
      if (parsed.rejected === 0 && written === 0) throw invalid('cannot write TLE: the body has no element sets');
      if (parsed.rejected > 0) {
        const first = parsed.errors[0]!;
        const outcome = written > 0 ? `partial write: ${written} element sets written, ${parsed.rejected} rejected` : `nothing written: ${parsed.rejected} element sets rejected`;
        throw invalid(`${outcome}; first bad set at line ${first.line}: ${first.message}`, { written, rejected: parsed.rejected, errors: parsed.errors });
      }
    } catch (err) {
      deps.metrics.ingestErrors.inc();
      throw err;
    }
    return c.body(null, 204);
  });
  return app;
}

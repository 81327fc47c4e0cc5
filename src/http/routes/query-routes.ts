/**
 * Query routes (spec, "Query endpoints"): thin handlers that check the body, run the SQL through the
 * QueryService with the format's encoder, and stream the bytes. The client's disconnect (the request
 * signal, or the body cancelled mid-response) cancels the running statement.
 */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { invalid } from '../../lib/errors.ts';
import { ArrowEncoder, JsonEncoder, MsgpackEncoder, renderFloatsAsJson, streamQuery, type Emit, type QueryBody, type QueryService, type StreamOptions, type WholeBodies } from '../../query/index.ts';
import { readJson, readQuery } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requirePermission } from '../middleware/auth.ts';
import { database, DATABASE_RULES } from '../middleware/database.ts';
import { queryOrigin } from '../query-origin.ts';

/** `{sql}` (or `q`, as the hosted variant names it); `format` is accepted and must be json when given. */
export const queryBody = z.object({
  sql: z.string().optional(),
  q: z.string().optional(),
  format: z.enum(['json']).optional(),
});

/**
 * GET /api/v1/query/:measurement parameters: `database` (or `db`, or x-svc-database), `limit`
 * (1-100000, default 100), `offset` (default 0), `order` (`desc` newest first, default; or `asc`),
 * `start` (inclusive) and `end` (exclusive): RFC 3339 timestamps or epoch milliseconds.
 */
export const measurementParams = z.object({
  database: z.string().optional(),
  db: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(100_000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
  order: z.enum(['asc', 'desc']).default('desc'),
  start: z.string().optional(),
  end: z.string().optional(),
});

const NO_SHOW_ON_ARROW = 'SHOW and DESCRIBE statements are not supported on /api/v1/query/arrow: send them to POST /api/v1/query (JSON) or /api/v1/query/msgpack';
const IDENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;

const sqlOf = (body: z.output<typeof queryBody>): string => {
  const sql = body.sql ?? body.q;
  if (!sql || sql.trim() === '') throw invalid('sql is required: send {"sql": "SELECT ..."}');
  return sql;
};

/** A query result response; a result cut at max_rows_per_query says so in `x-svc-rows-capped`. */
/**
 * Bun.serve hands its server over as the env, so the body goes straight to its socket and streamed
 * parts may be reused once sent; a request from this process (`app.fetch(req)`, the memory service's
 * in-process calls) has no env and its reader keeps the parts (see StreamOptions).
 */
function bodyOptions(c: Context<AppEnv>, wholeBodies: WholeBodies): StreamOptions {
  return { recycleSentParts: typeof (c.env as { upgrade?: unknown } | undefined)?.upgrade === 'function', wholeBodies };
}

function resultResponse(out: QueryBody, headers: Record<string, string>): Response {
  if (out.rowsCapped) headers['x-svc-rows-capped'] = 'true';
  return new Response(out.body, { headers });
}

/** A time parameter as a DuckDB TIMESTAMP expression (µs precision from RFC 3339, ms from epoch numbers). */
function timeParam(name: string, value: string): string {
  if (/^-?\d+$/.test(value)) return `epoch_ms(${Number(value)})`;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalid(`${name}: expected an RFC 3339 timestamp or epoch milliseconds, got '${value}'`);
  const frac = /\.(\d+)/.exec(value)?.[1] ?? '';
  const micros = ms * 1000 + (frac.length > 3 ? Number(frac.slice(3, 6).padEnd(3, '0')) : 0);
  return `make_timestamp(${micros})`;
}

/**
 * POST /api/v1/query, /query/arrow, /query/msgpack, /query/estimate; GET /api/v1/measurements and
 * /api/v1/query/:measurement. Result bodies within `wholeBodies`' budget are sent with their length.
 */
export function queryRoutes(queries: QueryService, wholeBodies: WholeBodies) {
  const app = new Hono<AppEnv>();
  // Per route, not app.use('*'): this router is mounted at /api/v1 next to routers of other resources.
  const read = requirePermission('read');
  const sqlRoute = [read, database(DATABASE_RULES.query)] as const;

  // Bodies are sent whole within the budget, else stream as they are encoded (see query/result-stream.ts).
  app.post('/query', ...sqlRoute, async (c) => {
    const sql = sqlOf(await readJson(c, queryBody));
    const req = { sql, database: c.var.database, access: c.get('access'), signal: c.req.raw.signal, render: renderFloatsAsJson, origin: queryOrigin(c, 'query', 'json') };
    const out = await streamQuery(queries, req, (cols, emit) => new JsonEncoder(cols, emit), bodyOptions(c, wholeBodies));
    return resultResponse(out, { 'content-type': 'application/json' });
  });

  app.post('/query/arrow', ...sqlRoute, async (c) => {
    const sql = sqlOf(await readJson(c, queryBody));
    const req = { sql, database: c.var.database, access: c.get('access'), signal: c.req.raw.signal, refuseShow: NO_SHOW_ON_ARROW, origin: queryOrigin(c, 'query', 'arrow') };
    const out = await streamQuery(queries, req, (cols, emit) => new ArrowEncoder(cols, emit), bodyOptions(c, wholeBodies));
    return resultResponse(out, { 'content-type': 'application/vnd.apache.arrow.stream' });
  });

  app.post('/query/msgpack', ...sqlRoute, async (c) => {
    const sql = sqlOf(await readJson(c, queryBody));
    const profile = c.req.header('x-svc-profile')?.toLowerCase() === 'true';
    const zstd = /\bzstd\b/i.test(c.req.header('accept-encoding') ?? '');
    // The map is emitted whole at the end, so compressing it is one call over all of it. Level 1: on
    // query results (mostly doubles) it compressed twice as fast as the default 3, to the same size.
    const compressed = (emit: Emit): Emit => (parts) => emit([Bun.zstdCompressSync(Buffer.concat(parts), { level: 1 })]);
    const req = { sql, database: c.var.database, access: c.get('access'), signal: c.req.raw.signal, origin: queryOrigin(c, 'query', 'msgpack') };
    const out = await streamQuery(queries, req, (cols, emit) => new MsgpackEncoder(cols, zstd ? compressed(emit) : emit, profile), bodyOptions(c, wholeBodies));
    const headers: Record<string, string> = { 'content-type': 'application/msgpack' };
    if (zstd) headers['content-encoding'] = 'zstd';
    return resultResponse(out, headers);
  });

  app.post('/query/estimate', ...sqlRoute, async (c) => {
    const sql = sqlOf(await readJson(c, queryBody));
    return c.json(await queries.estimate({ sql, database: c.var.database, access: c.get('access'), signal: c.req.raw.signal, origin: queryOrigin(c, 'estimate', 'json') }));
  });

  app.get('/measurements', read, database(DATABASE_RULES.measurementList), (c) => {
    const list = queries.measurements(c.get('access'), c.var.database).map((m) => ({ database: m.database, name: m.measurement }));
    return c.json({ success: true, measurements: list, count: list.length });
  });

  app.get('/query/:measurement', read, database(DATABASE_RULES.measurementRead), async (c) => {
    const p = readQuery(c, measurementParams);
    const measurement = c.req.param('measurement');
    const db = c.var.database!;
    if (!IDENT.test(db) || !IDENT.test(measurement)) throw invalid('invalid database or measurement name');
    const where = [p.start ? `time >= ${timeParam('start', p.start)}` : '', p.end ? `time < ${timeParam('end', p.end)}` : ''].filter(Boolean);
    const sql = `SELECT * FROM "${db}"."${measurement}"${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY time ${p.order.toUpperCase()} LIMIT ${p.limit} OFFSET ${p.offset}`;
    const req = { sql, access: c.get('access'), signal: c.req.raw.signal, render: renderFloatsAsJson, origin: queryOrigin(c, 'measurement', 'json') };
    const out = await streamQuery(queries, req, (cols, emit) => new JsonEncoder(cols, emit), bodyOptions(c, wholeBodies));
    return resultResponse(out, { 'content-type': 'application/json' });
  });

  return app;
}

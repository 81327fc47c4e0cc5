/**
 * POST /api/v1/query/export `{sql, format: csv|parquet|arrow}`: the whole result as a file to
 * download (Content-Disposition attachment, X-Svc-Row-Count). Used by the console and `svc export`.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { EXPORT_FORMATS, exportQuery, type QueryService } from '../../query/index.ts';
import { readJson } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requirePermission } from '../middleware/auth.ts';
import { queryOrigin } from '../query-origin.ts';

export const exportBody = z.object({
  sql: z.string().trim().min(1, 'sql is required: send {"sql": "SELECT ...", "format": "csv"}'),
  format: z.enum(EXPORT_FORMATS),
  filename: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, 'filename: letters, digits, dot, underscore and hyphen only').optional(),
});

/** The export route; mounted at /api/v1. */
export function exportRoutes(queries: QueryService) {
  const app = new Hono<AppEnv>();
  app.post('/query/export', requirePermission('read'), async (c) => {
    const body = await readJson(c, exportBody);
    const req = { sql: body.sql, database: c.req.header('x-svc-database') || undefined, access: c.get('access'), signal: c.req.raw.signal, refuseShow: 'SHOW and DESCRIBE statements cannot be exported: run them on POST /api/v1/query', origin: queryOrigin(c, 'export', body.format) };
    const file = await exportQuery(queries, req, body.format);
    const name = body.filename ?? `svc-export.${file.extension}`;
    const headers: Record<string, string> = {
      'content-type': file.contentType,
      'content-disposition': `attachment; filename="${name}"`,
      'x-svc-row-count': String(file.rows),
    };
    if (file.rowsCapped) headers['x-svc-rows-capped'] = 'true';
    return c.body(file.bytes as Uint8Array<ArrayBuffer>, 200, headers);
  });
  return app;
}

import { Hono } from 'hono';
import { z } from 'zod';
import type { DeleteService } from '../../admin/index.ts';
import { assertAllowed } from '../../lib/table-access.ts';
import { readJson } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requirePermission } from '../middleware/auth.ts';

export const deleteBody = z.object({
  database: z.string({ error: 'database is required' }),
  measurement: z.string({ error: 'measurement is required' }),
  where: z.string({ error: 'where is required (a condition such as "host = \'a\' AND time < \'2024-01-01\'")' }),
  confirm: z.boolean().optional(),
});

/**
 * /api/v1/delete: POST (admin, or a token granted the `delete` permission explicitly) removes matching rows; 200 `{deleted_rows, deleted_files,
 * rewritten_files, failed_files: [], errors: {}, execution_time_ms}`, or 207 with the failed files
 * listed (left unchanged). GET /config shows the settings.
 */
export function deleteRoutes(deletes: DeleteService) {
  const app = new Hono<AppEnv>();
  app.post('/', requirePermission('delete'), async (c) => {
    const body = await readJson(c, deleteBody);
    const access = c.get('access');
    assertAllowed(access, 'delete', body.database, [body.measurement]);
    const result = await deletes.delete({ ...body, confirm: body.confirm === true }, access);
    return c.json(result, result.failed_files.length > 0 ? 207 : 200);
  });
  app.get('/config', (c) => c.json(deletes.config()));
  return app;
}

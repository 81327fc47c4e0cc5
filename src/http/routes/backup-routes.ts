import { Hono } from 'hono';
import { restoreBody, type BackupService } from '../../admin/index.ts';
import { readJson } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';

/** /api/v1/backup: start a backup or a restore (202, in the background), progress, list, show, delete. All admin. */
export function backupRoutes(backups: BackupService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', requireAdmin);
  app.post('/', (c) => c.json(backups.startBackup(), 202));
  app.get('/', async (c) => {
    const list = await backups.list();
    return c.json({ backups: list, count: list.length });
  });
  app.get('/status', (c) => c.json(backups.status()));
  app.post('/restore', async (c) => {
    const body = await readJson(c, restoreBody);
    const opts = { restoreData: body.restore_data, restoreMetadata: body.restore_metadata, restoreConfig: body.restore_config };
    return c.json(await backups.startRestore(body.backup_id, opts), 202);
  });
  app.get('/:id', async (c) => c.json(await backups.get(c.req.param('id'))));
  app.delete('/:id', async (c) => {
    const id = c.req.param('id');
    await backups.delete(id);
    return c.json({ message: `backup ${id} deleted`, backup_id: id });
  });
  return app;
}

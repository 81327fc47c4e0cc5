/** Request shapes of the backup routes. */
import { z } from 'zod';

/** Body of POST /api/v1/backup/restore; `confirm` must be true. */
export const restoreBody = z.object({
  backup_id: z.string({ error: 'backup_id is required' }).min(1, 'backup_id is required'),
  restore_data: z.boolean().default(true),
  restore_metadata: z.boolean().default(true),
  restore_config: z.boolean().default(false),
  confirm: z.literal(true, { error: 'confirm must be true: a restore replaces data and metadata (add "confirm": true)' }),
});

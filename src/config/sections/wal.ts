import { z } from 'zod';
import { bool, int, oneOf, str } from '../fields.ts';

/** [wal]: write-ahead log. */
export const walSection = z.object({
  enabled: bool(false, 'Append every accepted write to the WAL before acknowledging it'),
  sync_mode: oneOf(['fdatasync', 'fsync', 'async'] as const, 'fdatasync', 'How WAL files reach disk (synced on a 100 ms ticker)'),
  directory: str('./data/wal', 'Folder of WAL segment files'),
  max_size_mb: int(100, 'Rotate a segment at this size', 1),
  max_age_seconds: int(3600, 'Rotate a segment at this age', 1),
});

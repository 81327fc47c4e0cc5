/**
 * /api/wal: inspection and cleanup of the write-ahead log. Mounted by main.ts at `/api/wal`.
 *
 * GET /api/wal/status -> 200
 *   enabled                       false when wal.enabled = false (then `stats` and `recovery` are null)
 *   configuration.sync_mode       fdatasync | fsync | async
 *   configuration.directory       the WAL folder
 *   configuration.max_size_mb     rotation size
 *   configuration.max_age_seconds rotation age
 *   configuration.current_file    path of the segment being written, null between segments
 *   stats.current_size_mb         size of that segment
 *   stats.current_age_seconds     its age
 *   stats.total_entries           appends since start (one per accepted write request)
 *   stats.total_bytes             bytes appended since start
 *   stats.total_records           rows appended since start
 *   stats.total_syncs             fsync/fdatasync calls completed (the 100 ms ticker; 0 in async mode)
 *   stats.total_rotations         segments closed by size, age, oversized entry or being fully flushed
 *   stats.pending_entries         appended entries whose rows are not yet in flushed Parquet files
 *   stats.live_files              *.wal files the WAL still needs
 *   stats.failed_writes           appends that failed (each one answered the write with 503)
 *   stats.oversized_payloads      appends larger than max_size_mb (written whole in their own segment)
 *   stats.last_sync_at            ISO time of the last completed sync, or null
 *   recovery                      the replay at start: {files, records, dropped, skipped, completed_at}, or null
 *
 * GET /api/wal/files -> 200
 *   directory                     the WAL folder
 *   active[]                      *.wal files, oldest first: {name, size_bytes, size_mb, modified (Unix s),
 *                                 state: active | closed | replayed | unreplayed, pending_entries (null if untracked)}
 *   recovered[]                   *.wal.recovered files (replayed and fully flushed), same fields, state recovered
 *   total_size_mb                 all of the above
 *
 * GET /api/wal/health -> 200, or 503 when status is unhealthy
 *   status                        healthy | degraded (an error in the last minute, or syncs lagging by more
 *                                 than 1 s) | unhealthy (closed) | disabled
 *   healthy                       status == healthy
 *   enabled, sync_mode
 *   last_error, last_error_at     the last append, sync or file error ("cannot ...: cause"), or null
 *   sync_lag_ms                   age of the oldest write not yet synced (0 when synced, always 0 in async)
 *   pending_entries               as in status
 *   oldest_pending_age_seconds    age of the oldest file still holding unflushed rows
 *
 * POST /api/wal/cleanup?max_age_hours=24 (admin) -> 200
 *   Deletes *.wal.recovered files last modified more than max_age_hours ago (0 = all). Live *.wal files
 *   are never deleted here: they are removed by the WAL itself once their rows are flushed.
 *   {message, max_age_hours, removed, freed_bytes}
 */
import { Hono } from 'hono';
import { z } from 'zod';
import type { WriteAheadLog } from '../../wal/index.ts';
import { readQuery } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { requireAdmin } from '../middleware/auth.ts';

export const cleanupQuery = z.object({
  max_age_hours: z.coerce.number().min(0, 'max_age_hours must be >= 0').max(87_600).default(24),
});

/** The /api/wal router over an enabled or disabled WAL. */
export function walRoutes(wal: WriteAheadLog): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/status', (c) => c.json(wal.status()));
  app.get('/files', (c) => c.json(wal.files()));
  app.get('/health', (c) => {
    const health = wal.health();
    return c.json(health, health.status === 'unhealthy' ? 503 : 200);
  });
  app.post('/cleanup', requireAdmin, async (c) => {
    const { max_age_hours } = readQuery(c, cleanupQuery);
    const result = await wal.cleanup(max_age_hours);
    return c.json({ message: `removed ${result.removed} recovered WAL file(s)`, max_age_hours, ...result });
  });
  return app;
}

import type { MiddlewareHandler } from 'hono';
import { unavailable } from '../../lib/errors.ts';
import type { Readiness } from '../../lib/readiness.ts';
import type { AppEnv } from '../context.ts';
import { routeGroupOf } from './request-metrics.ts';

/**
 * Route groups whose non-GET requests change stored rows. WAL replay puts older rows into the
 * buffers; a newer write accepted before them would be ordered first and lose last-write-wins, and a
 * delete, retention run, drop, restore or compaction would run without the rows not yet replayed
 * (which would then come back).
 */
export const MUTATING_GROUPS = new Set(['write', 'import', 'delete', 'retention', 'databases', 'compaction', 'backup', 'continuous_queries', 'mqtt']);

/** Refuses requests that change data (503, Retry-After) until start-up work is done; see MUTATING_GROUPS. */
export function writeGate(readiness: Readiness): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (readiness.phase === 'starting' && c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const group = routeGroupOf(c.req.path);
      if (MUTATING_GROUPS.has(group)) throw unavailable('the server is starting (replaying the write-ahead log); retry shortly', 1);
    }
    return next();
  };
}

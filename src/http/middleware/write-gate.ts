import type { MiddlewareHandler } from 'hono';
import { unavailable } from '../../lib/errors.ts';
import type { Readiness } from '../../lib/readiness.ts';
import type { AppEnv } from '../context.ts';
import { routeGroupOf } from './request-metrics.ts';

/**
 * Refuses writes (503, Retry-After) until start-up work is done. WAL replay puts older rows into the
 * buffers; a newer write accepted before them would be ordered first and lose last-write-wins.
 */
export function writeGate(readiness: Readiness): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (readiness.phase === 'starting' && c.req.method === 'POST') {
      const group = routeGroupOf(c.req.path);
      if (group === 'write' || group === 'import') throw unavailable('the server is starting (replaying the write-ahead log); retry shortly', 1);
    }
    return next();
  };
}

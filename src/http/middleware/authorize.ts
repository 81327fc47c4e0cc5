import type { MiddlewareHandler } from 'hono';
import type { Authorizer } from '../../auth/index.ts';
import type { AppEnv } from '../context.ts';

/**
 * Sets `access` from the authenticated principal: what it may do with which measurement. Routes pass
 * it to the query engine, the write path and the admin features, which check every measurement.
 */
export function authorize(authorizer: Authorizer): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('access', authorizer.accessFor(c.get('principal')));
    return next();
  };
}

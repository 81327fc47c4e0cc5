import { Hono } from 'hono';
import { notFound } from '../../lib/errors.ts';
import type { AppEnv } from '../context.ts';

/** The routes of a feature switched off by configuration: a 404 that names the setting, not a bare one. */
export function disabledRoutes(what: string, key: string) {
  const app = new Hono<AppEnv>();
  app.all('*', () => {
    throw notFound(`${what} is disabled (${key} = false)`);
  });
  return app;
}

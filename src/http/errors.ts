import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { ZodError } from 'zod';
import { AppError, messageOf } from '../lib/errors.ts';
import { scrubText } from '../lib/scrub.ts';
import type { Logger } from '../observability/index.ts';

/** Renders a zod failure as one sentence naming the field. */
export function describeZodError(err: ZodError): string {
  const issue = err.issues[0];
  if (!issue) return 'invalid request';
  const path = issue.path.join('.');
  if (issue.code === 'unrecognized_keys') return `unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`;
  if (issue.code === 'invalid_type' && issue.input === undefined) return `${path} is required`;
  return path ? `${path}: ${issue.message}` : issue.message;
}

/**
 * The one error handler: every failure becomes `{error}` with the status of its kind. Messages may
 * quote what the client sent (a path segment, a SQL literal): token-shaped words in them are redacted.
 */
export function errorHandler(logger: Logger) {
  return (err: Error, c: Context): Response => {
    if (err instanceof AppError) {
      for (const [k, v] of Object.entries(err.headers ?? {})) c.header(k, v);
      if (err.status >= 500) logger.error('request failed', { path: c.req.path, error: err.message });
      return c.json({ error: scrubText(err.message), ...err.extra }, err.status as 400);
    }
    if (err instanceof ZodError) return c.json({ error: scrubText(describeZodError(err)) }, 400);
    if (err instanceof HTTPException) {
      const status = err.status;
      return c.json({ error: err.message || (status === 413 ? 'request body too large' : 'request failed') }, status);
    }
    logger.error('unhandled error', { path: c.req.path, error: messageOf(err), stack: err.stack });
    return c.json({ error: scrubText(messageOf(err)) }, 500);
  };
}

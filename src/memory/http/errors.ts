import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { AppError, messageOf, type ErrorKind } from '../../lib/errors.ts';
import type { Logger } from '../../observability/index.ts';

/** The memory service's error codes, by error kind. */
const CODE_OF: Record<ErrorKind, string> = {
  invalid: 'invalid_request',
  unauthenticated: 'unauthorized',
  forbidden: 'forbidden',
  not_found: 'not_found',
  conflict: 'duplicate',
  too_large: 'payload_too_large',
  unsupported_media_type: 'unsupported_media_type',
  rate_limited: 'rate_limited',
  cancelled: 'cancelled',
  unavailable: 'unavailable',
  timeout: 'timeout',
  internal: 'internal',
};

/** The one error handler: every failure becomes `{error: <code>, message, ...extra}` with its status. */
export function memoryErrorHandler(logger: Logger) {
  return (err: Error, c: Context): Response => {
    if (err instanceof AppError) {
      if (err.status >= 500) logger.error('memory request failed', { path: c.req.path, error: err.message });
      for (const [k, v] of Object.entries(err.headers ?? {})) c.header(k, v);
      return c.json({ error: CODE_OF[err.kind], message: err.message, ...err.extra }, err.status as 400);
    }
    if (err instanceof HTTPException) {
      const code = err.status === 413 ? 'payload_too_large' : err.status === 400 ? 'invalid_request' : 'internal';
      return c.json({ error: code, message: err.message || 'request failed' }, err.status);
    }
    logger.error('memory request crashed', { path: c.req.path, error: messageOf(err), stack: err.stack });
    return c.json({ error: 'internal', message: messageOf(err) }, 500);
  };
}

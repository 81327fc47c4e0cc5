import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { formatSize } from '../../lib/sizes.ts';
import { tooLarge } from '../../lib/errors.ts';
import type { AppEnv } from '../context.ts';

/** 413 as soon as a body exceeds `maxBytes` (declared length or counted while streaming), before it is read whole. */
export function limitBody(maxBytes: number, what = 'request body'): MiddlewareHandler<AppEnv> {
  const refuse = () => {
    throw tooLarge(`${what} is larger than ${formatSize(maxBytes)} (server.max_payload_size)`);
  };
  const counted = bodyLimit({ maxSize: maxBytes, onError: refuse });
  return (c, next) => {
    // A declared length is checked from the header alone, as hono's bodyLimit does, but without asking
    // for `req.body` first: that getter makes Bun build a ReadableStream, and every write would pay for it.
    const headers = c.req.raw.headers;
    const declared = headers.get('content-length');
    if (declared !== null && !headers.has('transfer-encoding')) return parseInt(declared || '0', 10) > maxBytes ? refuse() : next();
    return counted(c, next);
  };
}

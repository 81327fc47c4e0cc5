import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { formatSize } from '../../lib/sizes.ts';
import { tooLarge } from '../../lib/errors.ts';
import type { AppEnv } from '../context.ts';

/** 413 as soon as a body exceeds `maxBytes` (declared length or counted while streaming), before it is read whole. */
export function limitBody(maxBytes: number, what = 'request body'): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw tooLarge(`${what} is larger than ${formatSize(maxBytes)} (server.max_payload_size)`);
    },
  });
}

import type { Context } from 'hono';
import { getConnInfo } from 'hono/bun';

/**
 * The peer address of the request's socket; null for in-process calls (the memory service reaches
 * this app through its fetch handler, with no socket). Forwarding headers are not trusted.
 */
export function clientIp(c: Context): string | null {
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    return null;
  }
}

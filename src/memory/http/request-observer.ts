import type { MiddlewareHandler } from 'hono';
import { getConnInfo } from 'hono/bun';
import type { MemoryEnv } from './env.ts';

/** One answered request of the memory service, for an observer such as the audit log. */
export interface ObservedRequest {
  method: string;
  path: string;
  status: number;
  durationMs: number;
  keyId: string | null;
  clientIp: string | null;
}

/** Told about every answered request (decides itself what to keep); must not throw. */
export type RequestObserver = (r: ObservedRequest) => void;

/** Reports each request to `observe` once answered (mounted first, so 401s are reported too). */
export function observeRequests(observe: RequestObserver): MiddlewareHandler<MemoryEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    let ip: string | null = null;
    try {
      ip = getConnInfo(c).remote.address ?? null;
    } catch {
      ip = null;
    }
    const principal = c.get('principal') as MemoryEnv['Variables']['principal'] | undefined;
    observe({ method: c.req.method, path: c.req.path, status: c.res.status, durationMs: performance.now() - started, keyId: principal?.keyId ?? null, clientIp: ip });
  };
}

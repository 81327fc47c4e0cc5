import type { Context } from 'hono';
import type { QueryOrigin } from '../query/index.ts';
import { clientIp } from './client-ip.ts';
import type { AppEnv } from './context.ts';

/**
 * Header that marks a query as the memory service's read (its records live in this service). Only
 * a label in the query registry: it grants nothing, so a client that sets it gains nothing.
 */
export const QUERY_SOURCE_HEADER = 'x-svc-query-source';

/** Who runs a query from this request and through which route (for query management and governance). */
export function queryOrigin(c: Context<AppEnv>, source: string, format: string): QueryOrigin {
  const p = c.get('principal');
  const marked = c.req.header(QUERY_SOURCE_HEADER) === 'memory';
  return {
    source: marked ? 'memory' : source,
    format,
    tokenId: p?.tokenId ?? null,
    tokenName: p?.name ?? null,
    isAdmin: p?.isAdmin ?? true,
    clientIp: clientIp(c),
  };
}

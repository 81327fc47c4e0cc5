import type { Context } from 'hono';
import { z } from 'zod';
import { notFound } from '../../lib/errors.ts';
import type { Caller } from '../../admin/index.ts';
import { readQuery } from '../body.ts';
import type { AppEnv } from '../context.ts';
import { wholeNumberParam } from '../query-params.ts';

/** The numeric `:id` of a retention policy or continuous query; 404 for anything else. */
export function idParam(c: Context, what: string): number {
  const raw = c.req.param('id') ?? '';
  if (!/^\d{1,15}$/.test(raw)) throw notFound(`${what} ${raw} not found`);
  return Number(raw);
}

export const historyParams = z.object({ limit: wholeNumberParam(1, 1000).optional() });

/** `limit` of an executions listing: 1-1000, default 50. */
export function historyLimit(c: Context): number {
  return readQuery(c, historyParams).limit ?? 50;
}

/** The caller of a create or update: its token id (recorded as the owner) and its access. */
export function callerOf(c: Context<AppEnv>): Caller {
  return { tokenId: c.get('principal')?.tokenId ?? null, access: c.get('access') };
}

import type { Context } from 'hono';
import { z } from 'zod';
import { notFound } from '../../lib/errors.ts';
import { readQuery } from '../body.ts';
import { wholeNumberParam } from '../query-params.ts';

/** The numeric `:id` of a retention policy or continuous query; 404 for anything else. */
export function idParam(c: Context, what: string): number {
  const raw = c.req.param('id') ?? '';
  if (!/^\d{1,15}$/.test(raw)) throw notFound(`${what} ${raw} not found`);
  return Number(raw);
}

const historyParams = z.object({ limit: wholeNumberParam(1, 1000).optional() });

/** `limit` of an executions listing: 1-1000, default 50. */
export function historyLimit(c: Context): number {
  return readQuery(c, historyParams).limit ?? 50;
}

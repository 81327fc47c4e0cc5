/**
 * Query-string validation done once per distinct query string. A write client sends the same query
 * (`?db=telegraf&precision=ms`) on every request, and a zod parse of it cost more than the rest of the
 * route's own work; the answer depends on the query string alone, so it is kept in a small bounded map.
 */
import type { Context } from 'hono';
import type { z } from 'zod';
import { setBounded } from '../lib/bounded-map.ts';
import { invalid } from '../lib/errors.ts';
import { describeZodError } from './errors.ts';

/** Distinct query strings kept per reader; the oldest is dropped past this. */
export const QUERY_CACHE_SIZE = 256;

/** A query string carrying a password (`p=`, InfluxDB 1.x) is never kept in memory past its request. */
const HOLDS_SECRET = /(?:^|&)(?:p|password|token)=/i;

type Outcome<T> = { ok: true; value: T } | { ok: false; message: string };

/** The raw query string of `url` (what follows `?`, without it; '' when there is none). */
export function rawQueryOf(url: string): string {
  const at = url.indexOf('?');
  return at < 0 ? '' : url.slice(at + 1);
}

/**
 * A reader with readQuery's contract (the schema's output, or AppError invalid naming the parameter)
 * that parses each distinct query string once. The output is shared between requests: callers must
 * not mutate it (it is frozen).
 */
export function cachedQueryReader<S extends z.ZodType>(schema: S, size = QUERY_CACHE_SIZE): (c: Context) => z.output<S> {
  const seen = new Map<string, Outcome<z.output<S>>>();
  const parse = (c: Context): Outcome<z.output<S>> => {
    const result = schema.safeParse(c.req.query(), { reportInput: true });
    return result.success ? { ok: true, value: Object.freeze(result.data) as z.output<S> } : { ok: false, message: describeZodError(result.error) };
  };
  return (c) => {
    const raw = rawQueryOf(c.req.url);
    let outcome = seen.get(raw);
    if (outcome === undefined) {
      outcome = parse(c);
      if (!HOLDS_SECRET.test(raw)) setBounded(seen, raw, outcome, size);
    }
    if (!outcome.ok) throw invalid(outcome.message);
    return outcome.value;
  };
}

import type { Context } from 'hono';
import type { z } from 'zod';
import { invalid } from '../../lib/errors.ts';
import { ID_RULE, isValidId } from '../ids.ts';

/** One sentence naming the field of the first problem: `memories[2].agent_id is required`. */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i > 0 ? '.' : ''}${String(p)}`)).join('');
  const subject = path || 'request body';
  if (issue.code === 'invalid_type')
    return issue.input === undefined || issue.input === null ? `${subject} is required` : `${subject} must be ${article(issue.expected)}`;
  if (issue.code === 'invalid_value') return `${subject} must be one of ${issue.values.map(String).join(', ')}`;
  return path ? `${path} ${issue.message}` : issue.message;
}

/** Parses `value` with `schema`, or throws 400 invalid_request naming the field. */
export function check<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw invalid(describeIssue(r.error.issues[0]!));
  return r.data;
}

/** The parsed JSON body; an empty body is `{}` when `emptyOk`, else 400. */
export async function readJson(c: Context, emptyOk = false): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') {
    if (emptyOk) return {};
    throw invalid('request body is required (JSON)');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalid('request body must be valid JSON');
  }
}

/** The JSON body checked by `schema`. */
export async function jsonBody<S extends z.ZodType>(c: Context, schema: S, emptyOk = false): Promise<z.output<S>> {
  return check(schema, await readJson(c, emptyOk));
}

/** The query string checked by `schema` (single values). */
export function queryParams<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return check(schema, c.req.query());
}

function article(expected: string): string {
  if (expected === 'record' || expected === 'object') return 'an object';
  if (expected === 'array') return 'an array';
  if (expected === 'int') return 'a whole number';
  return `a ${expected}`;
}

/** An id taken from the path, validated (`<what> must be ...` otherwise). */
export function pathId(value: string, what: string): string {
  if (!isValidId(value)) throw invalid(`${what} ${ID_RULE}`);
  return value;
}

import type { Context } from 'hono';
import type { z } from 'zod';
import { invalid } from '../lib/errors.ts';
import { describeZodError } from './errors.ts';

/** Parses the JSON body against `schema`; 400 naming the field on any problem. Empty body = `{}`. */
export async function readJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const text = await c.req.text();
  let raw: unknown = {};
  if (text.trim() !== '') {
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw invalid(`invalid JSON body: ${(err as Error).message}`);
    }
  }
  const result = schema.safeParse(raw, { reportInput: true });
  if (!result.success) throw invalid(describeZodError(result.error));
  return result.data;
}

/** Parses query parameters against `schema`; 400 naming the parameter on any problem. */
export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  const result = schema.safeParse(c.req.query(), { reportInput: true });
  if (!result.success) throw invalid(describeZodError(result.error));
  return result.data;
}

/** Reads the whole request body as bytes. */
export async function readBytes(c: Context): Promise<Uint8Array> {
  return new Uint8Array(await c.req.arrayBuffer());
}

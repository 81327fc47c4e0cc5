import { z } from 'zod';
import { parseSize } from '../lib/sizes.ts';
import { parseDuration } from '../lib/durations.ts';

/** What a field holds: decides how an env string is coerced and how the example file prints it. */
export type FieldKind = 'string' | 'bool' | 'int' | 'number' | 'size' | 'duration' | 'enum' | 'list';

/** Metadata every config field carries: its default (in the form a user writes it) and a description. */
export interface FieldMeta {
  kind: FieldKind;
  default: string | number | boolean | string[];
  description: string;
  [k: string]: unknown;
}

function withMeta<T extends z.ZodType>(schema: T, meta: FieldMeta): T {
  return schema.meta(meta) as T;
}

/** A free string (paths, hosts, secrets). */
export const str = (def: string, description: string) =>
  withMeta(z.string().prefault(def), { kind: 'string', default: def, description });

/** A secret string (keys, tokens, connection strings): never written into a backup's effective config. */
export const secret = (def: string, description: string) =>
  withMeta(z.string().prefault(def), { kind: 'string', default: def, description, secret: true });

/** A boolean; env accepts true/false/1/0/yes/no/on/off. */
export const bool = (def: boolean, description: string) =>
  withMeta(z.boolean().prefault(def), { kind: 'bool', default: def, description });

/** An integer within [min, max]. */
export const int = (def: number, description: string, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  withMeta(z.number().int(`must be a whole number`).min(min).max(max).prefault(def), { kind: 'int', default: def, description });

/** A non-negative number. */
export const num = (def: number, description: string) =>
  withMeta(z.number().min(0).prefault(def), { kind: 'number', default: def, description });

/** One of a fixed set of strings. */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T, def: T[number], description: string) =>
  withMeta(z.enum(values).prefault(def), { kind: 'enum', default: def, description, values: [...values] });

/** A list of strings. */
export const list = (def: string[], description: string) =>
  withMeta(z.array(z.string()).prefault(def), { kind: 'list', default: def, description });

/** A byte size with unit (`512MB`, `1GB`); parsed to bytes. Empty allowed only when `allowEmpty` (then 0). */
export const size = (def: string, description: string, allowEmpty = false) =>
  withMeta(
    z
      .string()
      .prefault(def)
      .refine((v) => (allowEmpty && v.trim() === '') || parseSize(v) !== null, {
        message: 'must be an absolute size with a unit: B, KB, MB or GB (for example 512MB)',
      })
      .transform((v) => (v.trim() === '' ? 0 : parseSize(v)!)),
    { kind: 'size', default: def, description },
  );

/** A duration: a number of `unit`s (default seconds) or a string with unit s, m, h, d; parsed to milliseconds. */
export const duration = (def: string, description: string) =>
  withMeta(
    z
      .union([z.number().min(0), z.string()])
      .prefault(def)
      .refine((v) => typeof v === 'number' || parseDuration(v) !== null || /^\s*\d+\s*$/.test(v), {
        message: 'must be a duration such as 30s, 5m, 2h or 1d (a bare number means seconds)',
      })
      .transform((v) => (typeof v === 'number' ? v * 1000 : (parseDuration(v) ?? Number(v) * 1000))),
    { kind: 'duration', default: def, description },
  );

/** Reads the metadata of a field built by the helpers above. */
export function metaOf(schema: z.ZodType): FieldMeta {
  const meta = schema.meta() as FieldMeta | undefined;
  if (!meta) throw new Error('config field without metadata: build fields with config/fields.ts helpers');
  return meta;
}

/**
 * Request schemas of the memory API (zod at the HTTP boundary). Messages are written to follow the
 * field name: `importance must be between 0.0 and 1.0`. Optional fields accept null as absent.
 */
import { z } from 'zod';
import { ID_RULE, isValidId } from '../ids.ts';
import { MEMORY_TYPES } from '../memory-record.ts';
import { parseTimeInput, TIME_INPUT_RULE } from '../time-input.ts';

/** Limits the spec leaves open, chosen here (documented in the API section). */
export const LIMITS = { content: 100_000, metadataBytes: 65_536, tags: 64, tagLength: 128, batch: 1000, pageMax: 1000, text: 256 };

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** null and undefined both mean "not given". */
export const opt = <S extends z.ZodType>(s: S) => s.nullish().transform((v) => v ?? undefined);

/** An identifier (see ids.ts). */
export const idField = z.string().refine(isValidId, ID_RULE);

/** A short printable label (event_type, names). */
export const labelField = z
  .string()
  .min(1, 'must not be empty')
  .max(LIMITS.text, `must be at most ${LIMITS.text} characters`)
  .refine((s) => !CONTROL.test(s), 'must not contain control characters');

/** One of the four memory types. */
export const memoryTypeField = z.enum(MEMORY_TYPES);

/** A JSON object, at most 64 KB serialized. */
export const objectField = z
  .record(z.string(), z.unknown())
  .refine((o) => JSON.stringify(o).length <= LIMITS.metadataBytes, `must be at most ${LIMITS.metadataBytes} bytes as JSON`);

/** A tag: matched exactly, so commas (the stored delimiter) are refused. */
export const tagField = z
  .string()
  .min(1, 'must not be empty')
  .max(LIMITS.tagLength, `must be at most ${LIMITS.tagLength} characters`)
  .refine((t) => !t.includes(','), 'must not contain commas')
  .refine((t) => !CONTROL.test(t), 'must not contain control characters');

/** `since`/`until`: relative or ISO 8601, to epoch microseconds. */
export const timeField = z.string().transform((v, ctx) => {
  const us = parseTimeInput(v, Date.now());
  if (us === null) {
    ctx.addIssue({ code: 'custom', message: TIME_INPUT_RULE });
    return z.NEVER;
  }
  return us;
});

/** An importance bound or value. */
export const importanceField = z.number().min(0, 'must be between 0.0 and 1.0').max(1, 'must be between 0.0 and 1.0');

/** Page size, 1 to 1000. */
export const limitField = z.number().int('must be a whole number').min(1, 'must be between 1 and 1000').max(LIMITS.pageMax, 'must be between 1 and 1000');
/** Page offset, 0 or more. */
export const offsetField = z.number().int('must be a whole number').min(0, 'must be 0 or more');
/** Sort direction. */
export const orderField = z.enum(['asc', 'desc']);

/** A whole number sent as a query-string value. */
export const intParam = (inner: z.ZodNumber) =>
  z
    .string()
    .regex(/^-?\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(inner);

/** One memory to create. */
export const memoryInputSchema = z.object({
  agent_id: idField,
  content: z.string().min(1, 'must not be empty').max(LIMITS.content, `must be at most ${LIMITS.content} characters`),
  memory_type: opt(memoryTypeField).transform((v) => v ?? 'episodic'),
  event_type: opt(labelField).transform((v) => v ?? 'general'),
  session_id: opt(idField),
  metadata: opt(objectField),
  tags: opt(z.array(tagField).max(LIMITS.tags, `must have at most ${LIMITS.tags} tags`)).transform((t) => [...new Set(t ?? [])]),
  importance: opt(importanceField).transform((v) => v ?? 0),
  dedup_key: opt(labelField),
  parent_id: opt(idField),
});

/** A batch of memories: validated whole before anything is written. */
export const memoryBatchSchema = z.object({
  memories: z
    .array(memoryInputSchema)
    .min(1, 'must hold at least one memory')
    .max(LIMITS.batch, `must hold at most ${LIMITS.batch} memories`),
});

/** `GET /api/v1/memories` query parameters. */
export const listQuerySchema = z.object({
  agent_id: idField.optional(),
  session_id: idField.optional(),
  memory_type: memoryTypeField.optional(),
  event_type: labelField.optional(),
  tags: z
    .string()
    .optional()
    .transform((s) => (s ?? '').split(',').map((t) => t.trim()).filter((t) => t.length > 0))
    .pipe(z.array(tagField)),
  since: timeField.optional(),
  until: timeField.optional(),
  limit: intParam(limitField).optional().transform((v) => v ?? 100),
  offset: intParam(offsetField).optional().transform((v) => v ?? 0),
  order: orderField.optional().transform((v) => v ?? 'desc'),
});

/** `POST /api/v1/search` body; `query` ranks by BM25. */
export const searchSchema = z
  .object({
    agent_id: opt(idField),
    session_id: opt(idField),
    memory_types: opt(z.array(memoryTypeField)),
    event_types: opt(z.array(labelField)),
    tags: opt(z.array(tagField)),
    content_contains: opt(z.string().max(LIMITS.text * 4, 'is too long')),
    min_importance: opt(importanceField),
    max_importance: opt(importanceField),
    since: opt(timeField),
    until: opt(timeField),
    order: opt(orderField).transform((v) => v ?? 'desc'),
    limit: opt(limitField).transform((v) => v ?? 100),
    offset: opt(offsetField).transform((v) => v ?? 0),
    query: opt(z.string().max(1000, 'must be at most 1000 characters')),
  })
  .refine((b) => b.min_importance === undefined || b.max_importance === undefined || b.min_importance <= b.max_importance, {
    message: 'min_importance must not be greater than max_importance',
  });

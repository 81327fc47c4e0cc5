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

/** An absolute instant (ISO 8601 with zone) to epoch microseconds. */
export const instantField = z
  .string()
  .refine((v) => /^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:?\d{2})$/.test(v) && Number.isFinite(Date.parse(v)), 'must be an ISO 8601 timestamp with a zone, such as 2030-01-01T00:00:00Z')
  .transform((v) => Date.parse(v) * 1000);

/** A metadata filter: exact match on top-level keys. */
export const metadataFilterField = z
  .record(
    z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, 'keys must be 1-128 characters: letters, digits, _ . -'),
    z.union([z.string(), z.number(), z.boolean()], { error: 'values must be strings, numbers or booleans' }),
  )
  .refine((o) => Object.keys(o).length <= 16, 'must have at most 16 keys');

const contentField = z.string().min(1, 'must not be empty').max(LIMITS.content, `must be at most ${LIMITS.content} characters`);
const tagsField = z.array(tagField).max(LIMITS.tags, `must have at most ${LIMITS.tags} tags`);

/** One memory to create. */
export const memoryInputSchema = z.object({
  agent_id: idField,
  content: contentField,
  memory_type: opt(memoryTypeField).transform((v) => v ?? 'episodic'),
  event_type: opt(labelField).transform((v) => v ?? 'general'),
  session_id: opt(idField),
  metadata: opt(objectField),
  tags: opt(tagsField).transform((t) => [...new Set(t ?? [])]),
  importance: opt(importanceField).transform((v) => v ?? 0),
  dedup_key: opt(labelField),
  parent_id: opt(idField),
  expires_at: opt(instantField),
});

/** `PATCH /api/v1/memories/:id`: the fields to change (at least one); `metadata` and `expires_at` may be null to clear. */
export const memoryPatchSchema = z
  .object({
    content: opt(contentField),
    importance: opt(importanceField),
    tags: opt(tagsField).transform((t) => (t ? [...new Set(t)] : undefined)),
    metadata: objectField.nullable().optional(),
    memory_type: opt(memoryTypeField),
    event_type: opt(labelField),
    expires_at: instantField.nullable().optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'at least one of content, importance, tags, metadata, memory_type, event_type, expires_at is required' });

/** `POST /api/v1/memories/forget`: which memories to forget (at least one condition), and whether to purge. */
export const forgetSchema = z
  .object({
    agent_id: opt(idField),
    session_id: opt(idField),
    tags: opt(z.array(tagField)),
    before: opt(timeField),
    purge: opt(z.boolean()).transform((v) => v ?? false),
  })
  .refine((b) => b.agent_id !== undefined || b.session_id !== undefined || (b.tags?.length ?? 0) > 0 || b.before !== undefined, {
    message: 'at least one of agent_id, session_id, tags, before is required',
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
  parent_id: idField.optional(),
  metadata: z
    .string()
    .optional()
    .transform((s, ctx) => {
      if (s === undefined) return undefined;
      try {
        return JSON.parse(s) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON object such as {"project":"apollo"}' });
        return z.NEVER;
      }
    })
    .pipe(metadataFilterField.optional()),
});

/** `POST /api/v1/search` body; `query` ranks by text relevance, recency and importance. */
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
    metadata: opt(metadataFilterField),
    parent_id: opt(idField),
    explain: opt(z.boolean()).transform((v) => v ?? false),
  })
  .refine((b) => b.min_importance === undefined || b.max_importance === undefined || b.min_importance <= b.max_importance, {
    message: 'min_importance must not be greater than max_importance',
  });

/** `POST /api/v1/sessions/:id/context` body. */
export const contextSchema = z.object({
  since: opt(timeField),
  until: opt(timeField),
  include_types: opt(z.array(memoryTypeField)),
  exclude_types: opt(z.array(memoryTypeField)),
  max_tokens: opt(z.number().int('must be a whole number').min(1, 'must be at least 1')),
  order: opt(orderField).transform((v) => v ?? 'desc'),
});

/** `POST /api/v1/agents` body. */
export const agentCreateSchema = z.object({
  name: labelField,
  description: opt(z.string().max(LIMITS.text * 16, `must be at most ${LIMITS.text * 16} characters`)),
  config: opt(objectField),
});

/** `POST /api/v1/sessions` body. */
export const sessionCreateSchema = z.object({ agent_id: idField, metadata: opt(objectField) });
/** `PUT /api/v1/sessions/:id` body (at least one field). */
export const sessionUpdateSchema = z.object({ status: opt(z.enum(['active', 'closed'])), metadata: opt(objectField) });
/** `GET /api/v1/sessions` query parameters. */
export const sessionListSchema = z.object({ agent_id: idField.optional() });

/** `POST /api/v1/keys` body; `org_id` defaults to the caller's organization. */
export const keyCreateSchema = z.object({
  name: labelField,
  org_id: opt(idField),
  is_admin: opt(z.boolean()).transform((v) => v ?? false),
  all_orgs: opt(z.boolean()).transform((v) => v ?? false),
});

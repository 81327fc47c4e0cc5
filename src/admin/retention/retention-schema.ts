/**
 * Retention policy bodies. Required: `name`, `database`, and the span as `duration` (`<n>d`) or
 * `retention_days` (both may be given if they agree). Optional: `measurement` (omitted or null: every
 * measurement of the database), `buffer_days` (default 0), `schedule` (5-field cron, UTC; omitted:
 * `retention.schedule`), `enabled` (default true), `description`. Unknown fields are refused.
 */
import { z } from 'zod';
import { invalid } from '../../lib/errors.ts';
import { databaseNameProblem, measurementNameProblem } from '../../lib/names.ts';
import { cronProblem } from '../cron.ts';

const check = (problem: (v: string) => string | null) => (v: string, ctx: z.RefinementCtx) => {
  const p = problem(v);
  if (p) ctx.addIssue({ code: 'custom', message: p });
};

/** A retention policy as stored. */
export interface RetentionPolicy {
  name: string;
  description: string;
  database: string;
  measurement: string | null;
  retention_days: number;
  buffer_days: number;
  schedule: string | null;
  enabled: boolean;
  /** The token that created or last updated it: each run deletes with that token's access (null: unrestricted). */
  owner_token_id?: string | null;
}

const fields = {
  name: z.string().trim().min(1, 'must not be empty').max(128),
  description: z.string().max(4096),
  database: z.string().superRefine(check(databaseNameProblem)),
  measurement: z.string().superRefine(check(measurementNameProblem)).nullable(),
  duration: z.string().regex(/^\s*[1-9]\d{0,5}d\s*$/, "must be a whole number of days such as '30d'"),
  retention_days: z.number().int('must be a whole number').min(1).max(1_000_000),
  buffer_days: z.number().int('must be a whole number').min(0).max(1_000_000),
  schedule: z.string().trim().superRefine(check(cronProblem)).nullable(),
  enabled: z.boolean(),
};

/** POST /api/v1/retention. */
export const createRetentionBody = z.strictObject({
  name: fields.name,
  description: fields.description.optional(),
  database: fields.database,
  measurement: fields.measurement.optional(),
  duration: fields.duration.optional(),
  retention_days: fields.retention_days.optional(),
  buffer_days: fields.buffer_days.optional(),
  schedule: fields.schedule.optional(),
  enabled: fields.enabled.optional(),
});

/** PUT /api/v1/retention/:id: any subset of the create fields; the others keep their values. */
export const updateRetentionBody = createRetentionBody.partial();

/** Input of create or update. */
export type RetentionInput = z.output<typeof updateRetentionBody>;

/** Merges `input` over `base` (create: no base) into a policy; 400 naming the field when the span is missing or contradictory. */
export function toPolicy(input: RetentionInput, base?: RetentionPolicy): RetentionPolicy {
  const fromDuration = input.duration === undefined ? undefined : Number.parseInt(input.duration.trim(), 10);
  if (fromDuration !== undefined && input.retention_days !== undefined && fromDuration !== input.retention_days)
    throw invalid(`duration: '${input.duration}' disagrees with retention_days ${input.retention_days}`);
  const days = fromDuration ?? input.retention_days ?? base?.retention_days;
  if (days === undefined) throw invalid("duration is required: give duration (such as '30d') or retention_days");
  const name = input.name ?? base?.name;
  const database = input.database ?? base?.database;
  if (name === undefined) throw invalid('name is required');
  if (database === undefined) throw invalid('database is required');
  return {
    name,
    description: input.description ?? base?.description ?? '',
    database,
    measurement: input.measurement === undefined ? (base?.measurement ?? null) : input.measurement,
    retention_days: days,
    buffer_days: input.buffer_days ?? base?.buffer_days ?? 0,
    schedule: input.schedule === undefined ? (base?.schedule ?? null) : input.schedule,
    enabled: input.enabled ?? base?.enabled ?? true,
  };
}

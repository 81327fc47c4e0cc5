/** Request bodies and query strings of the tiering routes. Unknown fields are refused. */
import { z } from 'zod';
import { databaseNameProblem, measurementNameProblem } from '../lib/names.ts';

const check = (problem: (v: string) => string | null) => (v: string, ctx: z.RefinementCtx) => {
  const p = problem(v);
  if (p) ctx.addIssue({ code: 'custom', message: p });
};

const days = z.number().int('must be a whole number of days').min(1).max(1_000_000);
const database = z.string().superRefine(check(databaseNameProblem));
const measurement = z.string().superRefine(check(measurementNameProblem));

/** POST and PUT /api/v1/tiering/policies: `measurement` omitted or null is the whole database. */
export const policyBody = z.strictObject({
  database,
  measurement: measurement.nullable().optional(),
  hot_max_age_days: days,
});

/** POST /api/v1/tiering/migrate. */
export const migrateBody = z.strictObject({
  database: database.optional(),
  older_than_days: z.number().int('must be a whole number of days').min(0).max(1_000_000).optional(),
  dry_run: z.boolean().default(false),
});

/** GET /api/v1/tiering/files. */
export const filesQuery = z.strictObject({
  database: z.string().optional(),
  measurement: z.string().optional(),
  tier: z.enum(['hot', 'cold']).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(1000),
});

export type PolicyBody = z.output<typeof policyBody>;
export type MigrateBody = z.output<typeof migrateBody>;
export type FilesQuery = z.output<typeof filesQuery>;

/**
 * Continuous query bodies, in both forms of the spec. Required: `name`, `query`,
 * `destination_measurement`, and a database: `database` (single-database form: source and
 * destination) or `source_database` (destination_database defaults to it). Optional:
 * `source_measurement` (documentation, and a guard against writing into the source),
 * `destination_database`, `schedule` (5-field cron, UTC), `interval` (`30s`, `1m`, `1h`, ... at least
 * 1s), `enabled` (default true), `description`. With neither schedule nor interval the query runs on
 * `continuous_queries.schedule`. Unknown fields are refused.
 */
import { z } from 'zod';
import { parseDuration } from '../../lib/durations.ts';
import { invalid } from '../../lib/errors.ts';
import { databaseNameProblem, measurementNameProblem } from '../../lib/names.ts';
import { cronProblem } from '../cron.ts';

const check = (problem: (v: string) => string | null) => (v: string, ctx: z.RefinementCtx) => {
  const p = problem(v);
  if (p) ctx.addIssue({ code: 'custom', message: p });
};

const intervalProblem = (v: string) => {
  const ms = parseDuration(v);
  return ms === null ? `'${v}' is not a duration such as 30s, 1m, 1h or 1d` : ms < 1000 ? 'must be at least 1s' : null;
};

/** A continuous query as stored (the fields the client gave, in its form). */
export interface ContinuousQuery {
  name: string;
  description: string;
  database: string | null;
  source_database: string | null;
  source_measurement: string | null;
  destination_database: string | null;
  destination_measurement: string;
  query: string;
  schedule: string | null;
  interval: string | null;
  enabled: boolean;
  /** The token that created or last updated it: each run has that token's access (null: unrestricted). */
  owner_token_id?: string | null;
}

const db = z.string().superRefine(check(databaseNameProblem)).nullable();
const measurement = z.string().superRefine(check(measurementNameProblem));

/** POST /api/v1/continuous_queries. */
export const createCqBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(128),
  description: z.string().max(4096).optional(),
  database: db.optional(),
  source_database: db.optional(),
  source_measurement: measurement.nullable().optional(),
  destination_database: db.optional(),
  destination_measurement: measurement,
  query: z.string().trim().min(1, 'must not be empty').max(100_000),
  schedule: z.string().trim().superRefine(check(cronProblem)).nullable().optional(),
  interval: z.string().trim().superRefine(check(intervalProblem)).nullable().optional(),
  enabled: z.boolean().optional(),
});

/** PUT /api/v1/continuous_queries/:id: any subset of the create fields; the others keep their values. */
export const updateCqBody = createCqBody.partial();

/** Input of create or update. */
export type CqInput = z.output<typeof updateCqBody>;

/** Where a query reads and writes, resolved from either form. */
export interface CqTargets {
  sourceDatabase: string;
  destinationDatabase: string;
  destinationMeasurement: string;
}

/** Resolves the databases of a stored query. */
export function targetsOf(q: ContinuousQuery): CqTargets {
  const sourceDatabase = (q.source_database ?? q.database)!;
  return { sourceDatabase, destinationDatabase: q.destination_database ?? q.database ?? sourceDatabase, destinationMeasurement: q.destination_measurement };
}

/** Merges `input` over `base` (create: no base); 400 naming the field when a required one is missing or the target is the source. */
export function toCq(input: CqInput, base?: ContinuousQuery): ContinuousQuery {
  const pick = <K extends keyof ContinuousQuery>(k: K, dflt: ContinuousQuery[K]): ContinuousQuery[K] =>
    (input[k as keyof CqInput] === undefined ? (base?.[k] ?? dflt) : input[k as keyof CqInput]) as ContinuousQuery[K];
  const q: ContinuousQuery = {
    name: pick('name', ''),
    description: pick('description', ''),
    database: pick('database', null),
    source_database: pick('source_database', null),
    source_measurement: pick('source_measurement', null),
    destination_database: pick('destination_database', null),
    destination_measurement: pick('destination_measurement', ''),
    query: pick('query', ''),
    schedule: pick('schedule', null),
    interval: pick('interval', null),
    enabled: pick('enabled', true),
  };
  if (!q.name) throw invalid('name is required');
  if (!q.query) throw invalid('query is required');
  if (!q.destination_measurement) throw invalid('destination_measurement is required');
  if (!q.database && !q.source_database) throw invalid('database is required: give database (single-database form) or source_database');
  const t = targetsOf(q);
  if (q.source_measurement && t.destinationDatabase === t.sourceDatabase && q.destination_measurement === q.source_measurement)
    throw invalid('destination_measurement: must differ from source_measurement (each run replaces its window in the destination)');
  return q;
}

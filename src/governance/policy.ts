/**
 * A governance policy: limits for one token, or (token_id null) the default for every non-admin
 * token. Every limit may be null (no limit). The body schema is strict: unknown fields are refused.
 */
import { z } from 'zod';

const count = z.number().int('must be a whole number').min(0, 'must not be negative').nullable();

/** Each limit's schema (null = no limit). */
const limitFields = {
  rate_limit_per_minute: count,
  rate_limit_per_hour: count,
  max_queries_per_day: count,
  max_rows_per_query: count,
  max_scan_duration_seconds: z.number().min(0, 'must not be negative').nullable(),
  max_concurrent_queries: count,
};

/** The limits a policy sets; a limit left out is null. */
export const policyLimits = z.strictObject(Object.fromEntries(Object.entries(limitFields).map(([k, v]) => [k, v.default(null)])) as { [K in keyof typeof limitFields]: z.ZodDefault<(typeof limitFields)[K]> });

/** POST /api/v1/governance/policies body. */
export const createPolicyBody = policyLimits.extend({ token_id: z.string().min(1).nullable().default(null) }).strict();

/** PUT /api/v1/governance/policies/:id body: only the limits given change; token_id may move it. */
export const updatePolicyBody = z.strictObject(limitFields).partial().extend({ token_id: z.string().min(1).nullable().optional() }).strict();

export type PolicyLimits = z.output<typeof policyLimits>;

/** A stored policy as the API shows it. */
export interface Policy extends PolicyLimits {
  id: string;
  token_id: string | null;
  created_at: string;
  updated_at: string;
}

/** The limit names, in the order the API shows them. */
export const LIMIT_NAMES = Object.keys(policyLimits.shape) as (keyof PolicyLimits)[];

/**
 * A governance policy: limits for one token, or (token_id null) the default for every non-admin
 * token. Every limit may be null (no limit). The body schema is strict: unknown fields are refused.
 */
import { z } from 'zod';

const limit = z.number().int('must be a whole number').min(0, 'must not be negative').nullable();

/** The limits a policy sets (each null = no limit). */
export const policyLimits = z
  .object({
    rate_limit_per_minute: limit.default(null),
    rate_limit_per_hour: limit.default(null),
    max_queries_per_day: limit.default(null),
    max_rows_per_query: limit.default(null),
    max_scan_duration_seconds: z.number().min(0, 'must not be negative').nullable().default(null),
    max_concurrent_queries: limit.default(null),
  })
  .strict();

/** POST /api/v1/governance/policies body. */
export const createPolicyBody = policyLimits.extend({ token_id: z.string().min(1).nullable().default(null) }).strict();

/** PUT /api/v1/governance/policies/:id body: the limits given replace the stored ones; token_id may move it. */
export const updatePolicyBody = policyLimits.partial().extend({ token_id: z.string().min(1).nullable().optional() }).strict();

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

/**
 * The query gate (query/query-gate.ts) of this service: registers every query in the registry
 * (query management) and applies the policy that binds its token (governance): refuses it with 429
 * past a rate, daily or concurrency limit, and hands the engine its row cap and scan limit.
 */
import { rateLimited } from '../lib/errors.ts';
import type { QueryAdmission, QueryGate, QueryOrigin } from '../query/index.ts';
import type { Policy } from './policy.ts';
import type { PolicyBook } from './policy-book.ts';
import type { QueryRegistry } from './query-registry.ts';
import type { UsageCounters } from './usage-counters.ts';

/** The parts a governor uses; null when the feature is switched off. */
export interface GovernorParts {
  registry: QueryRegistry | null;
  policies: PolicyBook | null;
  usage: UsageCounters | null;
}

const DAY_MS = 86_400_000;

/** Admits queries through query management and governance. */
export class QueryGovernor implements QueryGate {
  constructor(private readonly parts: GovernorParts) {}

  admit(q: { sql: string; database: string | null; origin: QueryOrigin }): QueryAdmission {
    const { registry, policies, usage } = this.parts;
    const tokenId = q.origin.tokenId;
    const counted = usage !== null && tokenId !== null ? usage : null;
    const policy = policies !== null && tokenId !== null ? policies.effective(tokenId, q.origin.isAdmin) : null;
    if (policy && counted) this.check(policy, tokenId!, counted);
    counted?.begin(tokenId!);
    const running = registry?.start(q) ?? null;
    let finished = false;
    return {
      onStop: (listener) => running?.onStop(listener),
      maxRows: policy?.max_rows_per_query ?? null,
      scanLimitMs: policy?.max_scan_duration_seconds != null ? policy.max_scan_duration_seconds * 1000 : null,
      stopReason: () => running?.stopReason() ?? null,
      finish: (o) => {
        if (finished) return;
        finished = true;
        if (running) registry!.finish(running.id, o);
        counted?.end(tokenId!, o.rowCount, o.rowsCapped);
      },
    };
  }

  /** Throws 429 naming the first limit the token's next query would exceed. */
  private check(p: Policy, tokenId: string, usage: UsageCounters): void {
    const u = usage.of(tokenId);
    const now = usage.now();
    const refuse = (limit: string, value: number, retryMs: number) => {
      usage.reject(tokenId);
      return rateLimited(`governance limit exceeded: ${limit} (${value}) for token '${tokenId}'`, retryMs / 1000);
    };
    if (p.max_concurrent_queries !== null && u.running >= p.max_concurrent_queries) throw refuse('max_concurrent_queries', p.max_concurrent_queries, 1000);
    if (p.rate_limit_per_minute !== null && u.minute.count(now) >= p.rate_limit_per_minute)
      throw refuse('rate_limit_per_minute', p.rate_limit_per_minute, u.minute.retryAfterMs(now, p.rate_limit_per_minute));
    if (p.rate_limit_per_hour !== null && u.hour.count(now) >= p.rate_limit_per_hour)
      throw refuse('rate_limit_per_hour', p.rate_limit_per_hour, u.hour.retryAfterMs(now, p.rate_limit_per_hour));
    if (p.max_queries_per_day !== null && u.daily.queries >= p.max_queries_per_day)
      throw refuse('max_queries_per_day', p.max_queries_per_day, DAY_MS - (now % DAY_MS));
  }
}

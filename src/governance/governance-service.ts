/**
 * What the governance and query-management routes call: policy CRUD, usage views and the registry,
 * plus the gate the query engine runs every query through. Built once by main.ts from config.
 */
import type { CatalogDb } from '../catalog/index.ts';
import { notFound } from '../lib/errors.ts';
import { PolicyBook } from './policy-book.ts';
import type { Policy } from './policy.ts';
import { SqlitePolicyStore } from './policy-store.ts';
import { QueryGovernor } from './query-governor.ts';
import { LocalQueryRegistry, type QueryRegistry } from './query-registry.ts';
import { UsageCounters, type UsageView } from './usage-counters.ts';
import { SqliteUsageStore } from './usage-store.ts';

/** GET /api/v1/governance/usage/:token_id. */
export interface UsageReport extends UsageView {
  token_id: string;
  policy: Policy | null;
}

/** The built features; each null when switched off. */
export interface Governance {
  /** Null when both features are off: queries then run ungated. */
  gate: QueryGovernor | null;
  registry: QueryRegistry | null;
  policies: PolicyBook | null;
  usage: UsageCounters | null;
  /** Usage of one token with the policy that binds it; 404 for an unknown token. */
  report(tokenId: string): UsageReport;
  start(): void;
  stop(): void;
}

/** Builds query management and governance as configured. */
export function createGovernance(deps: {
  catalog: CatalogDb;
  queryManagement: boolean;
  governance: boolean;
  /** The token with this id (whether it is an admin), or null when there is none. */
  tokenOf: (tokenId: string) => { isAdmin: boolean } | null;
  now?: () => number;
}): Governance {
  const now = deps.now ?? Date.now;
  const registry = deps.queryManagement ? new LocalQueryRegistry(now) : null;
  const policies = deps.governance ? new PolicyBook(new SqlitePolicyStore(deps.catalog), (id) => deps.tokenOf(id) !== null, now) : null;
  const usage = deps.governance ? new UsageCounters(new SqliteUsageStore(deps.catalog), now) : null;
  const gate = registry || policies ? new QueryGovernor({ registry, policies, usage }) : null;
  return {
    gate,
    registry,
    policies,
    usage,
    report(tokenId) {
      if (!usage || !policies) throw notFound('governance is disabled (governance.enabled = false)');
      const token = deps.tokenOf(tokenId);
      if (!token) throw notFound(`no token with id '${tokenId}'`);
      return { token_id: tokenId, policy: policies.effective(tokenId, token.isAdmin), ...usage.view(tokenId) };
    },
    start: () => usage?.start(),
    stop: () => usage?.stop(),
  };
}

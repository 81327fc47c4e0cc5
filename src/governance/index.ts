/** Query management (registry: active, history, cancel) and governance (policies, usage counters). */
export { createGovernance, type Governance, type UsageReport } from './governance-service.ts';
export { createPolicyBody, updatePolicyBody, type Policy } from './policy.ts';
export { QUERY_STATUSES, HISTORY_SIZE, type QueryRecord, type QueryRegistry, type HistoryFilter, type QueryStatus } from './query-registry.ts';
export { RateWindow } from './rate-window.ts';
export { PolicyBook } from './policy-book.ts';

import { z } from 'zod';
import { bool, int } from '../fields.ts';

/** [query_management]: the registry of running and finished queries (GET/DELETE /api/v1/queries). */
export const queryManagementSection = z.object({
  enabled: bool(true, 'Register every query while it runs; admins list, inspect and cancel them under /api/v1/queries'),
});

/** [governance]: per-token query policies (rate, daily, concurrency, row and scan-time limits). */
export const governanceSection = z.object({
  enabled: bool(true, 'Apply governance policies to queries and count usage per token (with no policy nothing changes)'),
});

/** [audit_log]: who did what, kept in the catalog (SQLite) and read under /api/v1/audit. */
export const auditLogSection = z.object({
  enabled: bool(false, 'Record mutating requests, every 401/403 and query cancels in the audit log'),
  include_reads: bool(false, 'Also record every read request'),
  retention_days: int(90, 'Days audit events are kept (trimmed hourly)', 1),
});

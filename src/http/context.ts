import type { Principal } from '../auth/index.ts';
import type { TableAccess } from '../lib/table-access.ts';

/** Typed Hono context variables set by middleware and read by handlers. */
export type AppEnv = {
  Variables: {
    /** The caller; null only when auth is disabled. */
    principal: Principal | null;
    /** What the caller may do with which measurement (auth/rbac's authorizer; everything for admins). */
    access: TableAccess;
    /** Route group label for metrics. */
    routeGroup: string;
  };
};

import type { Principal } from '../auth/index.ts';

/** Typed Hono context variables set by middleware and read by handlers. */
export type AppEnv = {
  Variables: {
    /** The caller; null only when auth is disabled. */
    principal: Principal | null;
    /** Route group label for metrics. */
    routeGroup: string;
  };
};

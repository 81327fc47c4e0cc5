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
    /** The request's database, set by the database middleware (undefined where a route lets it be optional). */
    database: string | undefined;
    /** The request body, decompressed, set by the request-body middleware. */
    body: Uint8Array;
    /** Bytes received on the wire for `body` (before decompression). */
    bodyBytes: number;
  };
};

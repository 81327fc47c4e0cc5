import { Hono } from 'hono';
import type { AuditLog } from '../audit/index.ts';
import type { Authorizer, RbacService, TokenService } from '../auth/index.ts';
import type { ClusterNode } from '../cluster/index.ts';
import type { Config } from '../config/index.ts';
import type { Readiness } from '../lib/readiness.ts';
import type { Logger, SvcMetrics } from '../observability/index.ts';
import type { AppEnv } from './context.ts';
import { errorHandler } from './errors.ts';
import { openApiDocument } from './openapi.ts';
import { auditTrail } from './middleware/audit.ts';
import { authenticate } from './middleware/auth.ts';
import { authorize } from './middleware/authorize.ts';
import { limitBody } from './middleware/body-limit.ts';
import { clusterGate } from './middleware/cluster-gate.ts';
import { writeGate } from './middleware/write-gate.ts';
import { requestMetrics } from './middleware/request-metrics.ts';
import { authRoutes } from './routes/auth-routes.ts';
import { rbacRoutes } from './routes/rbac-routes.ts';
import { type BufferHealth, healthRoutes, type StorageHealth } from './routes/health-routes.ts';

/** Everything the HTTP layer needs, built by main.ts. Feature services are added here as they land. */
export interface AppDeps {
  config: Config;
  logger: Logger;
  metrics: SvcMetrics;
  tokens: TokenService;
  authorizer: Authorizer;
  rbac: RbacService;
  readiness: Readiness;
  storageHealth: StorageHealth;
  /** Write-buffer memory for /health: estimated bytes held and the bound (ingest.max_buffered_size). */
  bufferHealth?: BufferHealth;
  /** The audit log when audit_log.enabled: one middleware records every audited request. */
  audit?: AuditLog | null;
  /** Extra routers mounted by features: [base path, router]. */
  routers?: [string, Hono<AppEnv>][];
  /** The cluster node, once it joined; null on a standalone server. */
  cluster?: () => ClusterNode | null;
  /** Awaited after every successful mutating request (a cluster sends replicated metadata before answering). */
  afterMutation?: () => Promise<void>;
}

/** Builds the time-series service's Hono app: middleware once, then one small router per resource. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(errorHandler(deps.logger));
  app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${c.req.path}` }, 404));
  app.use('*', requestMetrics(deps.metrics, deps.logger));
  // Before auth: a refused request (401, 403) is audited too.
  if (deps.audit) app.use('*', auditTrail(deps.audit));
  app.use('*', authenticate(deps.tokens, deps.config.auth.enabled));
  app.use('*', authorize(deps.authorizer));
  // Before any body is read: a forwarded request streams its body on unread.
  if (deps.cluster) {
    const cl = deps.config.cluster;
    app.use('*', clusterGate(deps.cluster, { sharedSecret: cl.shared_secret, authTtlMs: deps.config.auth.cache_ttl * 1000, quorumLossMs: Math.max(3000, 3 * cl.heartbeat_interval), primaryRetryMs: 3000, primaryTimeoutMs: Math.max(2000, cl.failover_timeout / 2), maxHeldBodyBytes: deps.config.server.max_payload_size, gateOnCatchup: cl.query_gate_on_catchup }));
  }
  // Import routes stream their uploads to disk and count bytes themselves (500 MB); the general limit
  // would buffer a body without Content-Length in memory first.
  const bodyCap = limitBody(deps.config.server.max_payload_size);
  app.use('*', (c, next) => (c.req.path.startsWith('/api/v1/import/') ? next() : bodyCap(c, next)));
  app.use('*', writeGate(deps.readiness));
  const after = deps.afterMutation;
  if (after) {
    // A 2xx to a token, database or policy change then means every node will see it.
    app.use('*', async (c, next) => {
      await next();
      if (c.req.method !== 'GET' && c.req.method !== 'HEAD' && c.res.status < 400)
        await after().catch((err: Error) => deps.logger.warn('cannot send the change to the cluster yet; retried in the background', { error: err.message }));
    });
  }

  app.route('/', healthRoutes(deps));
  // Built at the first request, once every router is mounted.
  let doc: Record<string, unknown> | null = null;
  app.get('/openapi.json', (c) => c.json((doc ??= openApiDocument(app.routes))));
  app.route('/api/v1/auth', authRoutes(deps.tokens));
  app.route('/api/v1/rbac', rbacRoutes(deps.rbac, deps.authorizer));
  for (const [base, router] of deps.routers ?? []) app.route(base, router);
  return app;
}

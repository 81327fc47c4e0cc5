import { Hono } from 'hono';
import type { AuditLog } from '../audit/index.ts';
import type { TokenService } from '../auth/index.ts';
import type { Config } from '../config/index.ts';
import type { Readiness } from '../lib/readiness.ts';
import type { Logger, SvcMetrics } from '../observability/index.ts';
import type { AppEnv } from './context.ts';
import { errorHandler } from './errors.ts';
import { auditTrail } from './middleware/audit.ts';
import { authenticate } from './middleware/auth.ts';
import { limitBody } from './middleware/body-limit.ts';
import { writeGate } from './middleware/write-gate.ts';
import { requestMetrics } from './middleware/request-metrics.ts';
import { authRoutes } from './routes/auth-routes.ts';
import { healthRoutes, type StorageHealth } from './routes/health-routes.ts';

/** Everything the HTTP layer needs, built by main.ts. Feature services are added here as they land. */
export interface AppDeps {
  config: Config;
  logger: Logger;
  metrics: SvcMetrics;
  tokens: TokenService;
  readiness: Readiness;
  storageHealth: StorageHealth;
  /** The audit log when audit_log.enabled: one middleware records every audited request. */
  audit?: AuditLog | null;
  /** Extra routers mounted by features: [base path, router]. */
  routers?: [string, Hono<AppEnv>][];
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
  // Import routes stream their uploads to disk and count bytes themselves (500 MB); the general limit
  // would buffer a body without Content-Length in memory first.
  const bodyCap = limitBody(deps.config.server.max_payload_size);
  app.use('*', (c, next) => (c.req.path.startsWith('/api/v1/import/') ? next() : bodyCap(c, next)));
  app.use('*', writeGate(deps.readiness));

  app.route('/', healthRoutes(deps));
  app.route('/api/v1/auth', authRoutes(deps.tokens));
  for (const [base, router] of deps.routers ?? []) app.route(base, router);
  return app;
}

import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from '../../observability/index.ts';
import type { AgentService } from '../agent-service.ts';
import type { KeyService } from '../key-service.ts';
import type { MemoryService } from '../memory-service.ts';
import type { SearchService } from '../search-service.ts';
import type { SessionService } from '../session-service.ts';
import { agentRoutes } from './agent-routes.ts';
import { requireKey } from './auth.ts';
import { observeRequests, type RequestObserver } from './request-observer.ts';
import type { MemoryEnv } from './env.ts';
import { memoryErrorHandler } from './errors.ts';
import { memoryHealthRoutes } from './health-routes.ts';
import { keyRoutes } from './key-routes.ts';
import { mcpRoutes } from './mcp-route.ts';
import { memoryRoutes } from './memory-routes.ts';
import { openApiDocument } from './openapi.ts';
import { searchRoutes } from './search-routes.ts';
import { sessionRoutes } from './session-routes.ts';

/** Largest request body: a full batch of 1000 memories with large contents fits. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Everything the memory HTTP layer calls. */
export interface MemoryHttpDeps {
  logger: Logger;
  startedAt: number;
  pingStorage: () => Promise<boolean>;
  keys: KeyService;
  memories: MemoryService;
  search: SearchService;
  agents: AgentService;
  sessions: SessionService;
  /** Told about every answered request (the audit log, when on). */
  observe?: RequestObserver;
}

/** The memory service's Hono app: public health, then API-key auth on every /api route and on /mcp. */
export function memoryHttpApp(deps: MemoryHttpDeps): Hono<MemoryEnv> {
  const app = new Hono<MemoryEnv>();
  app.onError(memoryErrorHandler(deps.logger));
  app.notFound((c) => c.json({ error: 'not_found', message: `no route for ${c.req.method} ${c.req.path}` }, 404));
  if (deps.observe) app.use('*', observeRequests(deps.observe));
  app.route('/', memoryHealthRoutes(deps));
  let doc: Record<string, unknown> | null = null;
  app.get('/openapi.json', (c) => c.json((doc ??= openApiDocument(app.routes))));
  app.use('/api/*', requireKey(deps.keys));
  app.use('/mcp', requireKey(deps.keys));
  app.route('/mcp', mcpRoutes(() => app.fetch));
  app.use('/api/*', bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => c.json({ error: 'payload_too_large', message: `request body is larger than ${MAX_BODY_BYTES} bytes` }, 413) }));
  app.route('/api/v1/memories', memoryRoutes(deps.memories));
  app.route('/api/v1/search', searchRoutes(deps.search));
  app.route('/api/v1/agents', agentRoutes(deps.agents));
  app.route('/api/v1/sessions', sessionRoutes(deps.sessions));
  app.route('/api/v1/keys', keyRoutes(deps.keys));
  return app;
}

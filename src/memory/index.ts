/**
 * The agent memory service, self-contained: it keeps memories in the time-series service (reached
 * only through its public HTTP API, `svc`) and agents, sessions, API keys and tombstones in its own
 * SQLite file. `createMemoryService` builds every part and returns the fetch handler.
 */
import type { Config } from '../config/index.ts';
import { parseDuration } from '../lib/durations.ts';
import { invalid } from '../lib/errors.ts';
import { databaseNameProblem } from '../lib/names.ts';
import type { Logger } from '../observability/index.ts';
import { AgentService } from './agent-service.ts';
import { memoryHttpApp } from './http/app.ts';
import { KeyService } from './key-service.ts';
import { MemoryIndex } from './memory-index.ts';
import { MemoryService } from './memory-service.ts';
import { MemoryWriter } from './memory-writer.ts';
import { SearchService } from './search-service.ts';
import { SessionService } from './session-service.ts';
import { StorageClient } from './storage-client.ts';
import { AgentStore } from './store/agent-store.ts';
import { ApiKeyStore } from './store/api-key-store.ts';
import { openMemoryDb } from './store/memory-db.ts';
import { MemoryIndexStore } from './store/memory-index-store.ts';
import { SessionStore } from './store/session-store.ts';
import { TombstoneStore } from './store/tombstone-store.ts';
import type { SvcFetch } from './svc-client.ts';
import type { RequestObserver } from './http/request-observer.ts';
import { Tombstones } from './tombstones.ts';
import { VersionState } from './version-state.ts';

export { svcFetch, type SvcFetch } from './svc-client.ts';
export { KEY_PREFIX } from './key-service.ts';
export type { ObservedRequest, RequestObserver } from './http/request-observer.ts';
export { MemoryClient, MemoryApiError } from './client/memory-client.ts';
export { serveMcpStdio } from './mcp/mcp-server.ts';

/** A built memory service: its HTTP handler and how to release its resources. */
export interface MemoryServiceHandle {
  fetch: (req: Request) => Response | Promise<Response>;
  /** The admin key generated on first run (to print once), or null. */
  bootstrapKey: string | null;
  close(): void;
}

/** Builds the memory service from its config section. Throws a 400-kind AppError on a bad setting. */
export function createMemoryService(deps: { config: Config['memory']; svc: SvcFetch; logger: Logger; observe?: RequestObserver }): MemoryServiceHandle {
  const cfg = deps.config;
  const windowMs = parseDuration(cfg.dedup_window);
  if (windowMs === null || windowMs <= 0) throw invalid(`cannot start: memory.dedup_window '${cfg.dedup_window}' must be a duration such as 2s, 30m or 24h`);
  const dbProblem = databaseNameProblem(cfg.database);
  if (dbProblem) throw invalid(`cannot start: memory.database: ${dbProblem}`);
  const halfLifeMs = parseDuration(cfg.search_recency_half_life);
  if (halfLifeMs === null || halfLifeMs <= 0) throw invalid(`cannot start: memory.search_recency_half_life '${cfg.search_recency_half_life}' must be a duration such as 7d or 30d`);

  const db = openMemoryDb(cfg.db_path);
  const keys = new KeyService(new ApiKeyStore(db));
  const boot = keys.bootstrap(cfg.bootstrap_key);
  const storage = new StorageClient(deps.svc, cfg.database);
  const tombstones = new Tombstones(new TombstoneStore(db));
  const indexStore = new MemoryIndexStore(db);
  const versions = new VersionState(storage);
  const index = new MemoryIndex(indexStore, storage, tombstones, versions, deps.logger);
  const writer = new MemoryWriter(storage, tombstones, indexStore, windowMs);
  const memories = new MemoryService(storage, writer, tombstones, indexStore, versions);
  const sessionStore = new SessionStore(db);
  const app = memoryHttpApp({
    logger: deps.logger,
    startedAt: Date.now(),
    pingStorage: () => storage.ping(),
    keys,
    memories,
    search: new SearchService(memories, index, { maxCandidates: cfg.search_candidates, recencyHalfLifeMs: halfLifeMs }),
    agents: new AgentService(new AgentStore(db), sessionStore, storage, tombstones, versions),
    sessions: new SessionService(sessionStore, memories, cfg.context_max_memories),
    observe: deps.observe,
  });
  if (boot.created && !boot.key) deps.logger.info('memory service admin key created from memory.bootstrap_key');
  // Catch up in the background: the service answers at once, and a search waits for it.
  void index.ready().catch(() => undefined);
  return { fetch: app.fetch, bootstrapKey: boot.key, close: () => db.close() };
}

/**
 * Sessions: lifecycle in SQLite (active -> closed, metadata replaced on update) and the Markdown
 * context of a session built from its memories in storage.
 */
import { invalid, notFound } from '../lib/errors.ts';
import { fitContext } from './context-render.ts';
import { newId } from './ids.ts';
import type { MemoryService } from './memory-service.ts';
import type { SessionRecord, SessionStore } from './store/session-store.ts';

/** Options of a context request (validated; times in epoch microseconds). */
export interface ContextOptions {
  sinceUs?: number;
  untilUs?: number;
  includeTypes?: string[];
  excludeTypes?: string[];
  maxTokens?: number;
  order: 'asc' | 'desc';
}

/** A rendered context. */
export interface SessionContext {
  session_id: string;
  context: string;
  memory_count: number;
  estimated_tokens: number;
  truncated: boolean;
}

/** Session lifecycle and context rendering. */
export class SessionService {
  constructor(
    private readonly sessions: SessionStore,
    private readonly memories: MemoryService,
    /** Most memories (newest first) considered for one context. */
    private readonly maxContextMemories: number,
  ) {}

  /** Starts a session in state `active`. */
  create(orgId: string, input: { agent_id: string; metadata?: Record<string, unknown> }): SessionRecord {
    const now = new Date().toISOString();
    const s: SessionRecord = {
      session_id: newId('ses'),
      org_id: orgId,
      agent_id: input.agent_id,
      status: 'active',
      metadata: input.metadata ?? null,
      created_at: now,
      updated_at: now,
    };
    this.sessions.insert(s);
    return s;
  }

  /** Sessions of an organization, optionally of one agent. */
  list(orgId: string, agentId?: string): SessionRecord[] {
    return this.sessions.list(orgId, agentId);
  }

  /** One session; 404 when unknown. */
  get(orgId: string, sessionId: string): SessionRecord {
    const s = this.sessions.get(orgId, sessionId);
    if (!s) throw notFound(`session '${sessionId}' not found`);
    return s;
  }

  /** Closes and/or replaces metadata; `updated_at` is set. A closed session cannot become active again. */
  update(orgId: string, sessionId: string, patch: { status?: 'active' | 'closed'; metadata?: Record<string, unknown> }): SessionRecord {
    const s = this.get(orgId, sessionId);
    if (patch.status === 'active' && s.status === 'closed') throw invalid(`session '${sessionId}' is closed; a closed session cannot be reopened`);
    const next: SessionRecord = {
      ...s,
      status: patch.status ?? s.status,
      metadata: patch.metadata ?? s.metadata,
      updated_at: new Date().toISOString(),
    };
    this.sessions.update(next);
    return next;
  }

  /** The session's memories as Markdown within `maxTokens` (oldest dropped first). */
  async context(orgId: string, sessionId: string, o: ContextOptions): Promise<SessionContext> {
    this.get(orgId, sessionId);
    const newestFirst = await this.memories.select(
      { orgId, sessionId, sinceUs: o.sinceUs, untilUs: o.untilUs, memoryTypes: o.includeTypes, excludeTypes: o.excludeTypes },
      { order: 'desc', limit: this.maxContextMemories },
    );
    const fitted = fitContext(sessionId, newestFirst, o.order, o.maxTokens);
    if (!fitted) throw invalid(`max_tokens ${o.maxTokens} is too small: the empty context layout alone needs more`);
    return {
      session_id: sessionId,
      context: fitted.context,
      memory_count: fitted.memories.length,
      estimated_tokens: fitted.estimatedTokens,
      truncated: fitted.dropped > 0,
    };
  }
}

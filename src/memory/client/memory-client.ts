/**
 * A small typed client of the memory service's HTTP API, for agents and tests. It needs only
 * `fetch`; request types are the inputs of the same zod schemas the routes check (types only, so
 * importing this file pulls in no server code).
 */
import type { z } from 'zod';
import type { AgentStats } from '../agent-service.ts';
import type { forgetSchema, listQuerySchema, memoryInputSchema, memoryPatchSchema, searchSchema } from '../http/schemas.ts';
import type { Memory } from '../memory-record.ts';
import type { SearchHit } from '../search-service.ts';
import type { SessionContext } from '../session-service.ts';

/** A memory to create (fields of the spec plus `expires_at`). */
export type MemoryCreate = z.input<typeof memoryInputSchema>;
/** Fields of a PATCH. */
export type MemoryPatch = z.input<typeof memoryPatchSchema>;
/** A search body. */
export type SearchRequest = z.input<typeof searchSchema>;
/** A bulk forget body. */
export type ForgetRequest = z.input<typeof forgetSchema>;
/** List filters (the query string; `tags` comma-separated, `metadata` an object sent as JSON). */
export type ListRequest = Omit<z.input<typeof listQuerySchema>, 'limit' | 'offset' | 'metadata'> & {
  limit?: number;
  offset?: number;
  metadata?: Record<string, string | number | boolean>;
};

/** An agent registration. */
export interface Agent {
  agent_id: string;
  name: string;
  description: string | null;
  config?: Record<string, unknown> | null;
  created_at: string;
  updated_at?: string;
}

/** A session. */
export interface Session {
  session_id: string;
  agent_id: string;
  status: 'active' | 'closed';
  metadata?: Record<string, unknown> | null;
  created_at?: string;
  updated_at?: string;
}

/** A failed call: the HTTP status and the service's `{error, message}`. */
export class MemoryApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** Options of a client. */
export interface MemoryClientOptions {
  /** e.g. `http://127.0.0.1:9100` */
  baseUrl: string;
  apiKey: string;
  /** Another fetch (an in-process handler, a proxy); default the global fetch. */
  fetch?: (req: Request) => Promise<Response> | Response;
}

/** The memory API, one method per route. */
export class MemoryClient {
  private readonly base: string;

  constructor(private readonly opts: MemoryClientOptions) {
    this.base = opts.baseUrl.replace(/\/$/, '');
  }

  /** POST /api/v1/memories (one). */
  createMemory(m: MemoryCreate): Promise<Memory> {
    return this.call('POST', '/api/v1/memories', m);
  }

  /** POST /api/v1/memories (`{memories}` batch): created memories and skipped duplicate keys. */
  createMemories(memories: MemoryCreate[]): Promise<{ memories: Memory[]; duplicates: string[]; count: number }> {
    return this.call('POST', '/api/v1/memories', { memories });
  }

  /** GET /api/v1/memories. */
  listMemories(q: ListRequest = {}): Promise<{ memories: Memory[]; count: number; has_more: boolean }> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null) params.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
    const qs = params.toString();
    return this.call('GET', `/api/v1/memories${qs ? `?${qs}` : ''}`);
  }

  /** GET /api/v1/memories/:id. */
  getMemory(id: string): Promise<Memory> {
    return this.call('GET', `/api/v1/memories/${encodeURIComponent(id)}`);
  }

  /** PATCH /api/v1/memories/:id: the new version. */
  patchMemory(id: string, patch: MemoryPatch): Promise<Memory> {
    return this.call('PATCH', `/api/v1/memories/${encodeURIComponent(id)}`, patch);
  }

  /** GET /api/v1/memories/:id/history: every version, oldest first. */
  history(id: string): Promise<{ memory_id: string; versions: Memory[]; count: number }> {
    return this.call('GET', `/api/v1/memories/${encodeURIComponent(id)}/history`);
  }

  /** DELETE /api/v1/memories/:id: forget, or with `purge` erase from storage. */
  async deleteMemory(id: string, opts: { purge?: boolean } = {}): Promise<void> {
    await this.call('DELETE', `/api/v1/memories/${encodeURIComponent(id)}${opts.purge ? '?purge=true' : ''}`);
  }

  /** POST /api/v1/memories/forget: forget (or purge) every memory matching the filter. */
  forget(f: ForgetRequest): Promise<{ forgotten: number; purged: boolean }> {
    return this.call('POST', '/api/v1/memories/forget', f);
  }

  /** POST /api/v1/search. */
  search(q: SearchRequest = {}): Promise<{ results: SearchHit[]; count: number; query_time_ms: number }> {
    return this.call('POST', '/api/v1/search', q);
  }

  /** POST /api/v1/agents. */
  createAgent(a: { name: string; description?: string; config?: Record<string, unknown> }): Promise<Agent> {
    return this.call('POST', '/api/v1/agents', a);
  }

  /** GET /api/v1/agents. */
  listAgents(): Promise<{ agents: Agent[]; count: number }> {
    return this.call('GET', '/api/v1/agents');
  }

  /** GET /api/v1/agents/:id/stats. */
  agentStats(id: string): Promise<AgentStats> {
    return this.call('GET', `/api/v1/agents/${encodeURIComponent(id)}/stats`);
  }

  /** POST /api/v1/sessions. */
  createSession(s: { agent_id: string; metadata?: Record<string, unknown> }): Promise<Session> {
    return this.call('POST', '/api/v1/sessions', s);
  }

  /** GET /api/v1/sessions. */
  listSessions(agentId?: string): Promise<{ sessions: Session[]; count: number }> {
    return this.call('GET', `/api/v1/sessions${agentId ? `?agent_id=${encodeURIComponent(agentId)}` : ''}`);
  }

  /** PUT /api/v1/sessions/:id. */
  updateSession(id: string, s: { status?: 'active' | 'closed'; metadata?: Record<string, unknown> }): Promise<Session> {
    return this.call('PUT', `/api/v1/sessions/${encodeURIComponent(id)}`, s);
  }

  /** POST /api/v1/sessions/:id/context. */
  context(id: string, o: { since?: string; until?: string; include_types?: string[]; exclude_types?: string[]; max_tokens?: number; order?: 'asc' | 'desc' } = {}): Promise<SessionContext> {
    return this.call('POST', `/api/v1/sessions/${encodeURIComponent(id)}/context`, o);
  }

  /** Any route, for what the methods above do not cover. Throws MemoryApiError on a non-2xx answer. */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { 'x-api-key': this.opts.apiKey };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const req = new Request(this.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const res = await (this.opts.fetch ?? fetch)(req);
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    if (!res.ok) {
      const e = (parsed ?? {}) as { error?: string; message?: string };
      throw new MemoryApiError(res.status, e.error ?? 'error', e.message ?? `${method} ${path} answered ${res.status}`, parsed);
    }
    return parsed as T;
  }
}

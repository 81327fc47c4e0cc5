/**
 * Agents: registrations in SQLite, statistics computed live from the memories in storage (and the
 * sessions in SQLite). Deleting an agent keeps its memories.
 */
import { notFound } from '../lib/errors.ts';
import { newId } from './ids.ts';
import { MEMORY_TYPES } from './memory-record.ts';
import { statsSql } from './memory-sql.ts';
import type { AgentRecord, AgentStore } from './store/agent-store.ts';
import type { SessionStore } from './store/session-store.ts';
import type { StorageClient } from './storage-client.ts';
import type { Tombstones } from './tombstones.ts';
import type { VersionState } from './version-state.ts';

/** Live statistics of one agent. */
export interface AgentStats {
  agent_id: string;
  memory_count: number;
  memories_24h: number;
  errors_24h: number;
  session_count: number;
  active_sessions: number;
  memory_types: Record<string, number>;
}

/** Agent registrations and statistics. */
export class AgentService {
  constructor(
    private readonly agents: AgentStore,
    private readonly sessions: SessionStore,
    private readonly storage: StorageClient,
    private readonly tombstones: Tombstones,
    private readonly versions: VersionState,
  ) {}

  /** Registers an agent with a generated id. */
  create(orgId: string, input: { name: string; description?: string; config?: Record<string, unknown> }): AgentRecord {
    const now = new Date().toISOString();
    const agent: AgentRecord = {
      agent_id: newId('agt'),
      org_id: orgId,
      name: input.name,
      description: input.description ?? null,
      config: input.config ?? null,
      created_at: now,
      updated_at: now,
    };
    this.agents.insert(agent);
    return agent;
  }

  /** Agents of an organization. */
  list(orgId: string): AgentRecord[] {
    return this.agents.list(orgId);
  }

  /** One agent; 404 when unknown. */
  get(orgId: string, agentId: string): AgentRecord {
    const a = this.agents.get(orgId, agentId);
    if (!a) throw notFound(`agent '${agentId}' not found`);
    return a;
  }

  /** Removes the registration (memories stay); 404 when unknown. */
  delete(orgId: string, agentId: string): void {
    if (!this.agents.delete(orgId, agentId)) throw notFound(`agent '${agentId}' not found`);
  }

  /**
   * Statistics computed now: memory counts by type, the last 24 hours, errors, sessions. Any agent_id
   * with memories or sessions has them, registered or not; 404 otherwise.
   */
  async stats(orgId: string, agentId: string, nowMs = Date.now()): Promise<AgentStats> {
    const filter = { orgId, agentId, excludeIds: this.tombstones.idsFor(orgId, agentId), aliveAtUs: nowMs * 1000, latestOnly: await this.versions.any() };
    const rows = await this.storage.query(statsSql(filter, (nowMs - 86_400_000) * 1000));
    const memoryTypes: Record<string, number> = Object.fromEntries(MEMORY_TYPES.map((t) => [t, 0]));
    let total = 0;
    let recent = 0;
    let errors = 0;
    for (const r of rows) {
      memoryTypes[String(r.memory_type)] = Number(r.total);
      total += Number(r.total);
      recent += Number(r.recent);
      errors += Number(r.errors);
    }
    const s = this.sessions.counts(orgId, agentId);
    if (total === 0 && s.total === 0 && !this.agents.get(orgId, agentId)) throw notFound(`agent '${agentId}' not found: it is not registered and has no memories`);
    return {
      agent_id: agentId,
      memory_count: total,
      memories_24h: recent,
      errors_24h: errors,
      session_count: s.total,
      active_sessions: s.active,
      memory_types: memoryTypes,
    };
  }
}

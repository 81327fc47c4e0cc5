import type { MemoryDb } from './memory-db.ts';

/** A registered agent. */
export interface AgentRecord {
  agent_id: string;
  org_id: string;
  name: string;
  description: string | null;
  config: Record<string, unknown> | null;
  created_at: string;
  updated_at: string;
}

interface AgentRow {
  agent_id: string;
  org_id: string;
  name: string;
  description: string | null;
  config: string | null;
  created_at: string;
  updated_at: string;
}

const toRecord = (r: AgentRow): AgentRecord => ({ ...r, config: r.config === null ? null : (JSON.parse(r.config) as Record<string, unknown>) });

/** Agents in SQLite, always scoped by organization. */
export class AgentStore {
  constructor(private readonly db: MemoryDb) {}

  /** Inserts a new agent. */
  insert(a: AgentRecord): void {
    this.db
      .prepare('INSERT INTO agents (agent_id, org_id, name, description, config, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(a.agent_id, a.org_id, a.name, a.description, a.config === null ? null : JSON.stringify(a.config), a.created_at, a.updated_at);
  }

  /** Agents of an organization, oldest first. */
  list(orgId: string): AgentRecord[] {
    return this.db.query<AgentRow, [string]>('SELECT * FROM agents WHERE org_id = ? ORDER BY created_at, agent_id').all(orgId).map(toRecord);
  }

  /** One agent, or null. */
  get(orgId: string, agentId: string): AgentRecord | null {
    const r = this.db.query<AgentRow, [string, string]>('SELECT * FROM agents WHERE org_id = ? AND agent_id = ?').get(orgId, agentId);
    return r ? toRecord(r) : null;
  }

  /** Deletes an agent; false when it did not exist. */
  delete(orgId: string, agentId: string): boolean {
    return this.db.prepare('DELETE FROM agents WHERE org_id = ? AND agent_id = ?').run(orgId, agentId).changes === 1;
  }
}

import type { MemoryDb } from './memory-db.ts';

/** A session. */
export interface SessionRecord {
  session_id: string;
  org_id: string;
  agent_id: string;
  status: 'active' | 'closed';
  metadata: Record<string, unknown> | null;
  created_at: string;
  updated_at: string;
}

interface SessionRow extends Omit<SessionRecord, 'metadata'> {
  metadata: string | null;
}

const toRecord = (r: SessionRow): SessionRecord => ({
  ...r,
  metadata: r.metadata === null ? null : (JSON.parse(r.metadata) as Record<string, unknown>),
});

/** Sessions in SQLite, always scoped by organization. */
export class SessionStore {
  constructor(private readonly db: MemoryDb) {}

  /** Inserts a new session. */
  insert(s: SessionRecord): void {
    this.db
      .prepare('INSERT INTO sessions (session_id, org_id, agent_id, status, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(s.session_id, s.org_id, s.agent_id, s.status, s.metadata === null ? null : JSON.stringify(s.metadata), s.created_at, s.updated_at);
  }

  /** Sessions of an organization (optionally one agent's), oldest first. */
  list(orgId: string, agentId?: string): SessionRecord[] {
    const rows =
      agentId === undefined
        ? this.db.query<SessionRow, [string]>('SELECT * FROM sessions WHERE org_id = ? ORDER BY created_at, session_id').all(orgId)
        : this.db
            .query<SessionRow, [string, string]>('SELECT * FROM sessions WHERE org_id = ? AND agent_id = ? ORDER BY created_at, session_id')
            .all(orgId, agentId);
    return rows.map(toRecord);
  }

  /** One session, or null. */
  get(orgId: string, sessionId: string): SessionRecord | null {
    const r = this.db.query<SessionRow, [string, string]>('SELECT * FROM sessions WHERE org_id = ? AND session_id = ?').get(orgId, sessionId);
    return r ? toRecord(r) : null;
  }

  /** Writes status, metadata and updated_at of an existing session. */
  update(s: SessionRecord): void {
    this.db
      .prepare('UPDATE sessions SET status = ?, metadata = ?, updated_at = ? WHERE org_id = ? AND session_id = ?')
      .run(s.status, s.metadata === null ? null : JSON.stringify(s.metadata), s.updated_at, s.org_id, s.session_id);
  }

  /** Session totals of one agent. */
  counts(orgId: string, agentId: string): { total: number; active: number } {
    const r = this.db
      .query<{ total: number; active: number | null }, [string, string]>(
        "SELECT count(*) AS total, sum(status = 'active') AS active FROM sessions WHERE org_id = ? AND agent_id = ?",
      )
      .get(orgId, agentId);
    return { total: r?.total ?? 0, active: r?.active ?? 0 };
  }
}

/**
 * Memories: create (with dedup), list with filters, get, change (a new version), history, forget
 * and purge. Reads go to the time-series query API and leave out forgotten (tombstoned), expired and
 * superseded rows; the search index follows every change.
 */
import { notFound } from '../lib/errors.ts';
import { KeyedLock } from './keyed-lock.ts';
import { fromRow, SELECT_COLUMNS, toStored, type Memory } from './memory-record.ts';
import { MEMORY_TABLE, selectMemoriesSql, whereClause, type MemoryFilter, type Page } from './memory-sql.ts';
import type { CreateResult, MemoryInput, MemoryWriter } from './memory-writer.ts';
import { sqlString, sqlStringList } from './sql.ts';
import type { StorageClient } from './storage-client.ts';
import type { MemoryIndexStore } from './store/memory-index-store.ts';
import type { Tombstones } from './tombstones.ts';
import type { VersionState } from './version-state.ts';

/** A page of memories. */
export interface MemoryPage {
  memories: Memory[];
  has_more: boolean;
}

/** The fields a PATCH may change (validated; `expires_at` in epoch µs, null clears it). */
export interface MemoryChanges {
  content?: string;
  importance?: number;
  tags?: string[];
  metadata?: Record<string, unknown> | null;
  memory_type?: string;
  event_type?: string;
  expires_at?: number | null;
}

/** Which memories a bulk forget takes (all given conditions must hold). */
export interface ForgetFilter {
  agentId?: string;
  sessionId?: string;
  tags?: string[];
  /** Written before this instant (epoch µs). */
  beforeUs?: number;
}

/** Memory ids per storage delete while purging in bulk (each delete rewrites the files holding them). */
const PURGE_CHUNK = 1000;

/** Memory operations of one organization at a time. */
export class MemoryService {
  /** Serializes changes to one memory, so two PATCHes never produce the same version. */
  private readonly lock = new KeyedLock();

  constructor(
    private readonly storage: StorageClient,
    private readonly writer: MemoryWriter,
    private readonly tombstones: Tombstones,
    private readonly index: MemoryIndexStore,
    private readonly versions: VersionState,
  ) {}

  /** Creates one memory (409 duplicate inside the window). */
  create(orgId: string, input: MemoryInput): Promise<Memory> {
    return this.writer.createOne(orgId, input);
  }

  /** Creates a batch; duplicates are skipped and reported. */
  createBatch(orgId: string, inputs: readonly MemoryInput[]): Promise<CreateResult> {
    return this.writer.createMany(orgId, inputs);
  }

  /** Memories matching `filter`, paged; `has_more` is true only when another row exists. */
  async list(filter: MemoryFilter, page: Page): Promise<MemoryPage> {
    const rows = await this.select(filter, { ...page, limit: page.limit + 1 });
    return { memories: rows.slice(0, page.limit), has_more: rows.length > page.limit };
  }

  /** Memories matching `filter` (forgotten and, unless the filter says when, expired ones left out), as one query. */
  async select(filter: MemoryFilter, page: Page): Promise<Memory[]> {
    const excludeIds = [...(filter.excludeIds ?? []), ...this.tombstones.idsFor(filter.orgId, filter.agentId)];
    const aliveAtUs = filter.aliveAtUs ?? Date.now() * 1000;
    const rows = await this.storage.query(selectMemoriesSql({ ...filter, excludeIds, aliveAtUs, latestOnly: await this.versions.any() }, page));
    return rows.map(fromRow);
  }

  /** One memory by id; 404 when unknown, forgotten or expired. */
  async get(orgId: string, memoryId: string): Promise<Memory> {
    const [m] = this.tombstones.has(memoryId) ? [] : await this.select({ orgId, memoryId }, { order: 'desc', limit: 1 });
    if (!m) throw notFound(`memory '${memoryId}' not found`);
    return m;
  }

  /** Writes a new version with `changes` applied; returns it. 404 when unknown. */
  patch(orgId: string, memoryId: string, changes: MemoryChanges): Promise<Memory> {
    return this.lock.withKeys([memoryId], async () => {
      const current = toStored(await this.get(orgId, memoryId));
      const next = {
        ...current,
        content: changes.content ?? current.content,
        importance: changes.importance ?? current.importance,
        tags: changes.tags ?? current.tags,
        metadata: changes.metadata === undefined ? current.metadata : changes.metadata,
        memory_type: changes.memory_type ?? current.memory_type,
        event_type: changes.event_type ?? current.event_type,
        expiresUs: changes.expires_at === undefined ? current.expiresUs : (changes.expires_at ?? 0),
        version: current.version + 1,
      };
      const written = await this.writer.writeVersion(next);
      this.versions.markPatched();
      return written;
    });
  }

  /** Every stored version of a memory, oldest first; 404 when unknown, forgotten or expired. */
  async history(orgId: string, memoryId: string): Promise<Memory[]> {
    await this.get(orgId, memoryId);
    const where = whereClause({ orgId, memoryId });
    const rows = await this.storage.query(`SELECT ${SELECT_COLUMNS} FROM ${MEMORY_TABLE} WHERE ${where} ORDER BY coalesce(version, 1) ASC`);
    return rows.map(fromRow);
  }

  /** Forgets a memory: every later read leaves it out and its dedup key is free again. 404 when unknown. */
  async forget(orgId: string, memoryId: string): Promise<void> {
    const m = await this.get(orgId, memoryId);
    this.tombstone(orgId, [{ memory_id: m.memory_id, agent_id: m.agent_id, dedup_key: m.dedup_key }]);
  }

  /**
   * Erases a memory (every version, forgotten or expired ones too) from storage: the files holding it
   * are rewritten without it, and it leaves the search index and the tombstones. 404 when unknown.
   */
  async purge(orgId: string, memoryId: string): Promise<void> {
    const found = await this.findAny(orgId, [memoryId]);
    if (found.length === 0) throw notFound(`memory '${memoryId}' not found`);
    await this.erase(orgId, found);
  }

  /** Forgets (or purges) every memory matching `f`; returns how many. */
  async forgetMany(orgId: string, f: ForgetFilter, purge: boolean): Promise<number> {
    const filter: MemoryFilter = { orgId, agentId: f.agentId, sessionId: f.sessionId, tags: f.tags, untilUs: f.beforeUs === undefined ? undefined : f.beforeUs - 1 };
    // Purging takes forgotten and expired memories too: erasure is about what storage holds.
    const sql = purge
      ? `SELECT DISTINCT memory_id, agent_id, dedup_key FROM ${MEMORY_TABLE} WHERE ${whereClause(filter)}`
      : `SELECT memory_id, agent_id, dedup_key FROM ${MEMORY_TABLE} WHERE ${whereClause({ ...filter, aliveAtUs: Date.now() * 1000, excludeIds: this.tombstones.idsFor(orgId, f.agentId), latestOnly: await this.versions.any() })}`;
    const found = (await this.storage.query(sql)).map((r) => ({ memory_id: String(r.memory_id), agent_id: String(r.agent_id), dedup_key: String(r.dedup_key) }));
    if (purge) await this.erase(orgId, found);
    else this.tombstone(orgId, found);
    return found.length;
  }

  private tombstone(orgId: string, found: readonly Found[]): void {
    const now = new Date().toISOString();
    for (const m of found) {
      this.tombstones.add({ memory_id: m.memory_id, org_id: orgId, agent_id: m.agent_id, dedup_key: m.dedup_key, deleted_at: now });
      this.writer.forget(orgId, m.dedup_key, m.memory_id);
    }
    this.index.remove(found.map((m) => m.memory_id));
  }

  private async erase(orgId: string, found: readonly Found[]): Promise<void> {
    const unique = [...new Map(found.map((m) => [m.memory_id, m])).values()];
    for (let i = 0; i < unique.length; i += PURGE_CHUNK) {
      const chunk = unique.slice(i, i + PURGE_CHUNK);
      const ids = chunk.map((m) => m.memory_id);
      await this.storage.delete(MEMORY_TABLE, `org_id = ${sqlString(orgId)} AND memory_id IN (${sqlStringList(ids)})`);
      this.index.remove(ids);
      this.tombstones.remove(ids);
      for (const m of chunk) this.writer.forget(orgId, m.dedup_key, m.memory_id);
    }
    this.index.checkpoint();
  }

  /** Every stored memory among `ids` of the organization, in any state. */
  private async findAny(orgId: string, ids: readonly string[]): Promise<Found[]> {
    const where = whereClause({ orgId });
    const rows = await this.storage.query(`SELECT DISTINCT memory_id, agent_id, dedup_key FROM ${MEMORY_TABLE} WHERE ${where} AND memory_id IN (${sqlStringList(ids)})`);
    return rows.map((r) => ({ memory_id: String(r.memory_id), agent_id: String(r.agent_id), dedup_key: String(r.dedup_key) }));
  }
}

interface Found {
  memory_id: string;
  agent_id: string;
  dedup_key: string;
}

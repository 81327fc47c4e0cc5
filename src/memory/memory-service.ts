/**
 * Memories: create (with dedup), list with filters, get, forget. Reads go to the time-series query
 * API; forgotten memories are excluded by tombstone (see tombstones.ts).
 */
import { notFound } from '../lib/errors.ts';
import { fromRow, type Memory } from './memory-record.ts';
import { selectMemoriesSql, type MemoryFilter, type Page } from './memory-sql.ts';
import type { CreateResult, MemoryInput, MemoryWriter } from './memory-writer.ts';
import type { StorageClient } from './storage-client.ts';
import type { Tombstones } from './tombstones.ts';

/** A page of memories. */
export interface MemoryPage {
  memories: Memory[];
  has_more: boolean;
}

/** Memory operations of one organization at a time. */
export class MemoryService {
  constructor(
    private readonly storage: StorageClient,
    private readonly writer: MemoryWriter,
    private readonly tombstones: Tombstones,
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

  /** Memories matching `filter` (tombstones excluded), as one query. */
  async select(filter: MemoryFilter, page: Page): Promise<Memory[]> {
    const excludeIds = [...(filter.excludeIds ?? []), ...this.tombstones.idsFor(filter.orgId, filter.agentId)];
    const rows = await this.storage.query(selectMemoriesSql({ ...filter, excludeIds }, page));
    return rows.map(fromRow);
  }

  /** One memory by id; 404 when unknown or forgotten. */
  async get(orgId: string, memoryId: string): Promise<Memory> {
    const [m] = this.tombstones.has(memoryId) ? [] : await this.select({ orgId, memoryId }, { order: 'desc', limit: 1 });
    if (!m) throw notFound(`memory '${memoryId}' not found`);
    return m;
  }

  /** Forgets a memory: every later read leaves it out and its dedup key is free again. 404 when unknown. */
  async forget(orgId: string, memoryId: string): Promise<void> {
    const m = await this.get(orgId, memoryId);
    this.tombstones.add({ memory_id: m.memory_id, org_id: orgId, agent_id: m.agent_id, dedup_key: m.dedup_key, deleted_at: new Date().toISOString() });
    this.writer.forget(orgId, m.dedup_key, m.memory_id);
  }
}

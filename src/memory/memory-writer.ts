/**
 * Creating memories: dedup check and write, atomic per dedup key inside this process. A key is a
 * duplicate when a memory of the same organization with that key exists inside the window (in the
 * recent-keys index or in storage, which shows acknowledged writes at once), or earlier in the batch.
 */
import { conflict } from '../lib/errors.ts';
import { deriveDedupKey, RecentKeys } from './dedup.ts';
import { newId } from './ids.ts';
import { KeyedLock } from './keyed-lock.ts';
import { toColumns, toMemory, type Memory, type StoredMemory } from './memory-record.ts';
import { dedupSql, MEMORY_TABLE } from './memory-sql.ts';
import type { StorageClient } from './storage-client.ts';
import type { MemoryIndexStore } from './store/memory-index-store.ts';
import type { Tombstones } from './tombstones.ts';

/** A validated memory to create (defaults applied by the HTTP schema). */
export interface MemoryInput {
  agent_id: string;
  content: string;
  memory_type: string;
  event_type: string;
  session_id?: string;
  metadata?: Record<string, unknown>;
  tags: string[];
  importance: number;
  dedup_key?: string;
  parent_id?: string;
  /** Epoch microseconds after which the memory is gone from every read. */
  expires_at?: number;
}

/** Outcome of a batch: the memories written and the dedup keys skipped as duplicates. */
export interface CreateResult {
  created: Memory[];
  duplicates: { dedup_key: string; memory_id: string }[];
}

/** Writes memories with deduplication. */
export class MemoryWriter {
  private readonly lock = new KeyedLock();
  private readonly recent: RecentKeys;
  private lastUs = 0;

  constructor(
    private readonly storage: StorageClient,
    private readonly tombstones: Tombstones,
    private readonly index: MemoryIndexStore,
    private readonly windowMs: number,
  ) {
    this.recent = new RecentKeys(windowMs);
  }

  /** Creates one memory; 409 `duplicate` (with the existing memory_id) inside the window. */
  async createOne(orgId: string, input: MemoryInput): Promise<Memory> {
    const { created, duplicates } = await this.createMany(orgId, [input]);
    if (duplicates.length > 0) {
      const d = duplicates[0]!;
      throw conflict(`a memory with dedup_key '${d.dedup_key}' already exists within the deduplication window`, { memory_id: d.memory_id });
    }
    return created[0]!;
  }

  /** Creates a batch in one storage write; duplicates are skipped and reported. */
  async createMany(orgId: string, inputs: readonly MemoryInput[]): Promise<CreateResult> {
    const rows = inputs.map((m) => this.toStored(orgId, m));
    const keys = rows.map((r) => r.dedup_key);
    return this.lock.withKeys(
      keys.map((k) => `${orgId}\u0000${k}`),
      async () => {
        const existing = await this.findExisting(orgId, [...new Set(keys)]);
        const accepted: StoredMemory[] = [];
        const duplicates: CreateResult['duplicates'] = [];
        for (const r of rows) {
          const holder = existing.get(r.dedup_key);
          if (holder) duplicates.push({ dedup_key: r.dedup_key, memory_id: holder });
          else {
            existing.set(r.dedup_key, r.memory_id); // a later item of the same batch is a duplicate of this one
            accepted.push(r);
          }
        }
        if (accepted.length > 0) {
          for (const r of accepted) r.timeUs = r.updatedUs = this.nextTimeUs();
          await this.write(accepted);
          for (const r of accepted) this.recent.set(orgId, r.dedup_key, { memoryId: r.memory_id, timeUs: r.timeUs });
        }
        return { created: accepted.map(toMemory), duplicates };
      },
    );
  }

  /** Called when a memory is forgotten, so its dedup key is free again. */
  forget(orgId: string, dedupKey: string, memoryId: string): void {
    this.recent.forgetMemory(orgId, dedupKey, memoryId);
  }

  private async findExisting(orgId: string, keys: string[]): Promise<Map<string, string>> {
    const nowUs = Date.now() * 1000;
    const found = new Map<string, string>();
    const unknown: string[] = [];
    for (const k of keys) {
      const hit = this.recent.get(orgId, k, nowUs);
      if (hit) found.set(k, hit.memoryId);
      else unknown.push(k);
    }
    if (unknown.length === 0) return found;
    const sql = dedupSql({ orgId, dedupKeys: unknown, sinceUs: nowUs - this.windowMs * 1000, excludeIds: this.tombstones.idsFor(orgId) });
    for (const row of await this.storage.query(sql)) {
      const key = String(row.dedup_key);
      if (!found.has(key)) found.set(key, String(row.memory_id));
    }
    return found;
  }

  /** Writes a new version of an existing memory (same id and time, version + 1); returns it as stored. */
  async writeVersion(row: StoredMemory): Promise<Memory> {
    row.updatedUs = this.nextTimeUs();
    await this.write([row]);
    return toMemory(row);
  }

  /** Writes rows to storage (acknowledged: queryable from now on), then to the search index. */
  private async write(rows: StoredMemory[]): Promise<void> {
    const c = toColumns(rows);
    await this.storage.write(MEMORY_TABLE, [
      { name: 'time', kind: 'int', values: c.time },
      ...Object.entries(c.strings).map(([name, values]) => ({ name, kind: 'string' as const, values })),
      { name: 'importance', kind: 'float', values: c.importance },
      ...Object.entries(c.ints).map(([name, values]) => ({ name, kind: 'int' as const, values })),
    ]);
    this.index.upsert(rows);
  }

  private toStored(orgId: string, m: MemoryInput): StoredMemory {
    return {
      memory_id: newId('mem'),
      timeUs: 0,
      org_id: orgId,
      agent_id: m.agent_id,
      session_id: m.session_id ?? null,
      memory_type: m.memory_type,
      event_type: m.event_type,
      content: m.content,
      metadata: m.metadata ?? null,
      tags: m.tags,
      importance: m.importance,
      dedup_key: m.dedup_key ?? deriveDedupKey(m.agent_id, m.event_type, m.content),
      parent_id: m.parent_id ?? null,
      version: 1,
      updatedUs: 0,
      expiresUs: m.expires_at ?? 0,
    };
  }

  /** Strictly increasing microsecond timestamps, so memories written here never tie on time. */
  private nextTimeUs(): number {
    this.lastUs = Math.max(Date.now() * 1000, this.lastUs + 1);
    return this.lastUs;
  }
}

/**
 * Deduplication helpers. The authoritative check is a query over the window (the time-series service
 * shows acknowledged writes at once); RecentKeys is a bounded in-process index of keys written here,
 * which answers most repeats without a query and covers writes still in flight.
 */
import { sha256Hex } from '../lib/crypto.ts';

/** The key used when a memory has none: a hash of agent_id, event_type and content. */
export function deriveDedupKey(agentId: string, eventType: string, content: string): string {
  return 'auto_' + sha256Hex(JSON.stringify([agentId, eventType, content])).slice(0, 40);
}

/** What the index knows about a key: the memory that holds it and when it was written. */
export interface RecentKey {
  memoryId: string;
  timeUs: number;
}

/** Bounded map from `org \0 dedup_key` to its newest memory; entries older than the window expire. */
export class RecentKeys {
  private readonly map = new Map<string, RecentKey>();

  constructor(
    private readonly windowMs: number,
    private readonly maxEntries = 100_000,
  ) {}

  /** The memory holding `key` inside the window ending at `nowUs`, or null. */
  get(orgId: string, key: string, nowUs: number): RecentKey | null {
    const hit = this.map.get(`${orgId}\u0000${key}`);
    if (!hit) return null;
    if (hit.timeUs < nowUs - this.windowMs * 1000) {
      this.map.delete(`${orgId}\u0000${key}`);
      return null;
    }
    return hit;
  }

  /** Records a written memory; the oldest entries go first when the index is full. */
  set(orgId: string, key: string, entry: RecentKey): void {
    const k = `${orgId}\u0000${key}`;
    this.map.delete(k); // re-insert at the end: Map order is insertion order, so the front is the oldest
    this.map.set(k, entry);
    while (this.map.size > this.maxEntries) this.map.delete(this.map.keys().next().value!);
  }

  /** Drops the entry pointing at a forgotten memory, so its key may be used again. */
  forgetMemory(orgId: string, key: string, memoryId: string): void {
    const k = `${orgId}\u0000${key}`;
    if (this.map.get(k)?.memoryId === memoryId) this.map.delete(k);
  }

  /** Number of keys held. */
  get size(): number {
    return this.map.size;
  }
}

/**
 * Forgetting without a storage delete: a forgotten memory gets a tombstone in SQLite, and every read
 * excludes tombstoned ids in its SQL. The set lives in memory too (it is small next to the memories),
 * indexed by organization and agent so a query carries only the ids that could match it.
 */
import type { Tombstone, TombstoneStore } from './store/tombstone-store.ts';

/** Tombstoned memory ids, persisted in SQLite and indexed in memory. */
export class Tombstones {
  private readonly byOrg = new Map<string, Map<string, string[]>>();
  private readonly ids = new Set<string>();

  constructor(private readonly store: TombstoneStore) {
    for (const t of store.all()) this.index(t);
  }

  /** Forgets a memory for good. */
  add(t: Tombstone): void {
    this.store.insert(t);
    this.index(t);
  }

  /** Drops tombstones of memories gone from storage (purged, or removed by retention), so tombstones do not outlive the rows they hide. */
  remove(memoryIds: readonly string[]): void {
    const gone = memoryIds.filter((id) => this.ids.delete(id));
    if (gone.length === 0) return;
    this.store.delete(gone);
    const set = new Set(gone);
    for (const org of this.byOrg.values())
      for (const [agent, list] of org) {
        const kept = list.filter((id) => !set.has(id));
        if (kept.length === 0) org.delete(agent);
        else if (kept.length !== list.length) org.set(agent, kept);
      }
  }

  /** Every tombstoned memory id (a copy). */
  snapshot(): Set<string> {
    return new Set(this.ids);
  }

  /** True when the memory was forgotten. */
  has(memoryId: string): boolean {
    return this.ids.has(memoryId);
  }

  /** Ids a query of this organization (and agent, when the query names one) must leave out. */
  idsFor(orgId: string, agentId?: string): string[] {
    const org = this.byOrg.get(orgId);
    if (!org) return [];
    if (agentId !== undefined) return org.get(agentId) ?? [];
    return [...org.values()].flat();
  }

  private index(t: Tombstone): void {
    if (this.ids.has(t.memory_id)) return;
    this.ids.add(t.memory_id);
    let org = this.byOrg.get(t.org_id);
    if (!org) this.byOrg.set(t.org_id, (org = new Map()));
    const list = org.get(t.agent_id);
    if (list) list.push(t.memory_id);
    else org.set(t.agent_id, [t.memory_id]);
  }
}

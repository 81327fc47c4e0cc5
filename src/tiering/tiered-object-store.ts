/**
 * One ObjectStore over two: the hot store (storage.*) and the cold one (tiering.cold_*). Every feature
 * (flush, queries, compaction, delete, retention, backup, the reaper) keeps using one store; the file
 * manifest's tier says which store holds a listed key. A new object goes to cold when its hour
 * partition already lives there (a compaction or delete rewrite of a cold hour stays cold), else hot.
 * Keys the manifest does not list (tombstoned, half-moved) are looked for in both stores.
 */
import type { FileTier } from '../catalog/index.ts';
import { setBounded } from '../lib/bounded-map.ts';
import { parseDataFileKey, type ObjectInfo, type ObjectStore, type PutSource } from '../storage/index.ts';

/** What the tiered store needs to know from the file manifest. */
export interface TierIndex {
  tierOf(path: string): FileTier | null;
  coldHour(database: string, measurement: string, hour: number): boolean;
}

/** Writes whose manifest entry was not recorded yet are remembered at most this many at once. */
const MAX_PLACED = 100_000;

/** The hot and the cold store behind the ObjectStore port; see the file comment. */
export class TieredObjectStore implements ObjectStore {
  readonly backend: string;
  private readonly placed = new Map<string, FileTier>();

  constructor(
    readonly hot: ObjectStore,
    readonly cold: ObjectStore,
    private readonly index: () => TierIndex | null,
  ) {
    this.backend = hot.backend;
  }

  /** Where `put` sent `key`, asked once by the manifest when it records the file (see FileManifestStore.setPlacement). */
  takePlacement(key: string): FileTier | undefined {
    const tier = this.placed.get(key);
    this.placed.delete(key);
    return tier;
  }

  async put(key: string, source: PutSource): Promise<ObjectInfo> {
    const tier = this.tierForNew(key);
    const info = await this.of(tier).put(key, source);
    setBounded(this.placed, key, tier, MAX_PLACED);
    return info;
  }

  get(key: string): Promise<Uint8Array> {
    return this.read(key, (s) => s.get(key));
  }

  stream(key: string): Promise<ReadableStream<Uint8Array>> {
    return this.read(key, (s) => s.stream(key));
  }

  localPath(key: string): Promise<string> {
    return this.read(key, (s) => s.localPath(key));
  }

  /**
   * An unlisted key is looked for where a new object of its hour would go, then in the other tier; that
   * second look fails soft (null), so a cold tier that is down does not stop hot work (compaction's
   * fresh output keys, a restore's checks): keys are never reused, so a miss there only costs a copy.
   */
  async stat(key: string): Promise<ObjectInfo | null> {
    const tier = this.index()?.tierOf(key);
    if (tier) return this.of(tier).stat(key);
    const first = this.tierForNew(key);
    return (await this.of(first).stat(key)) ?? this.of(first === 'hot' ? 'cold' : 'hot').stat(key).catch(() => null);
  }

  /** Both stores' objects, each with its tier; a key in both (a move in progress) is listed once, as hot. */
  async list(prefix: string): Promise<ObjectInfo[]> {
    const [hot, cold] = await Promise.all([this.hot.list(prefix), this.cold.list(prefix)]);
    const seen = new Set(hot.map((o) => o.key));
    const all = [...hot.map((o) => ({ ...o, tier: 'hot' as const })), ...cold.filter((o) => !seen.has(o.key)).map((o) => ({ ...o, tier: 'cold' as const }))];
    return all.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Removes the key from both stores: a deleted file must not come back from the other tier. */
  async delete(key: string): Promise<boolean> {
    const hot = await this.hot.delete(key);
    const cold = await this.cold.delete(key);
    return hot || cold;
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    await this.hot.deleteMany(keys);
    await this.cold.deleteMany(keys);
  }

  scratchPath(suffix: string): string {
    return this.hot.scratchPath(suffix);
  }

  private of(tier: FileTier): ObjectStore {
    return tier === 'cold' ? this.cold : this.hot;
  }

  private tierForNew(key: string): FileTier {
    const index = this.index();
    if (!index) return 'hot';
    const listed = index.tierOf(key);
    if (listed) return listed;
    const p = parseDataFileKey(key);
    return p && index.coldHour(p.database, p.measurement, p.hourMicros) ? 'cold' : 'hot';
  }

  /**
   * Reads from the tier the manifest names; an unlisted key from hot when hot has it, else from cold
   * (asked, not tried: local disk hands out a path without looking).
   */
  private async read<T>(key: string, op: (s: ObjectStore) => Promise<T>): Promise<T> {
    const tier = this.index()?.tierOf(key);
    if (tier) return op(this.of(tier));
    return op((await this.hot.stat(key)) ? this.hot : this.cold);
  }
}

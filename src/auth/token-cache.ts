/** A validated token held for `ttlMs`; a bounded LRU so a flood of bad tokens cannot grow memory. */
export class TokenCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  /** The most recently used key: a hit on it needs no re-insertion (one client sends one token over and over). */
  private newest: string | undefined;
  hits = 0;
  misses = 0;
  evictions = 0;

  constructor(
    readonly ttlMs: number,
    readonly maxSize: number,
  ) {}

  /** The cached value for `key` unless expired. */
  get(key: string, now = Date.now()): V | undefined {
    const e = this.entries.get(key);
    if (!e || e.expires <= now) {
      if (e) this.entries.delete(key);
      this.misses++;
      return undefined;
    }
    if (key !== this.newest) {
      // Re-insert to mark as most recently used.
      this.entries.delete(key);
      this.entries.set(key, e);
      this.newest = key;
    }
    this.hits++;
    return e.value;
  }

  /** Caches `value`, evicting the least recently used entry when full. */
  set(key: string, value: V, now = Date.now()): void {
    if (this.ttlMs <= 0 || this.maxSize <= 0) return;
    this.entries.delete(key);
    while (this.entries.size >= this.maxSize) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
      this.evictions++;
    }
    this.entries.set(key, { value, expires: now + this.ttlMs });
    this.newest = key;
  }

  /** Drops every entry whose value matches `pred` (a token revoked, rotated or deleted). */
  deleteWhere(pred: (v: V) => boolean): number {
    let n = 0;
    for (const [k, e] of this.entries) if (pred(e.value)) (this.entries.delete(k), n++);
    return n;
  }

  /** Drops everything; returns how many entries there were. */
  clear(): number {
    const n = this.entries.size;
    this.entries.clear();
    return n;
  }

  get size(): number {
    return this.entries.size;
  }
}

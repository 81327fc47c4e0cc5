/**
 * Per-key mutual exclusion inside this process: check-then-write of a dedup key runs alone, so two
 * concurrent creates with the same key cannot both pass the check.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `fn` while holding every key (acquired in sorted order, so two batches cannot deadlock). */
  async withKeys<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    const unique = [...new Set(keys)].sort();
    const releases: (() => void)[] = [];
    try {
      for (const k of unique) releases.push(await this.acquire(k));
      return await fn();
    } finally {
      for (const release of releases) release();
    }
  }

  /** Keys currently held or awaited (for tests: the map must drain). */
  get pending(): number {
    return this.tails.size;
  }

  private async acquire(key: string): Promise<() => void> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    return () => {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}

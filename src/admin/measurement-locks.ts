/**
 * One file-rewriting job at a time per measurement. Delete, retention, continuous-query window
 * replacement and database drops rewrite or remove a measurement's files from a listing taken at
 * their start; two of them (or compaction) interleaving on the same files could bring removed rows
 * back. Each holds the measurement's lock for its whole read-modify-swap cycle.
 */
export class MeasurementLocks {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `fn` once every earlier holder of each of `keys` is done; keys are taken in sorted order (no deadlock). */
  async run<T>(keys: readonly { database: string; measurement: string }[], fn: () => Promise<T>): Promise<T> {
    const names = [...new Set(keys.map((k) => `${k.database}\n${k.measurement}`))].sort();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const before = names.map((n) => this.tails.get(n) ?? Promise.resolve());
    const tails = names.map((n, i) => {
      const tail = before[i]!.then(() => mine);
      this.tails.set(n, tail);
      return tail;
    });
    try {
      await Promise.all(before);
      return await fn();
    } finally {
      release();
      names.forEach((n, i) => {
        // The last holder forgets the key, so the map does not grow with every measurement ever locked.
        if (this.tails.get(n) === tails[i]) this.tails.delete(n);
      });
    }
  }
}

/**
 * A sliding count over a time window, in fixed slots (60 one-second slots for a minute, 60
 * one-minute slots for an hour): O(slots) memory per token however many queries it runs.
 */
export class RateWindow {
  private readonly slotOf: Float64Array;
  private readonly counts: Uint32Array;

  constructor(
    private readonly slots: number,
    private readonly slotMs: number,
  ) {
    this.slotOf = new Float64Array(slots).fill(-1);
    this.counts = new Uint32Array(slots);
  }

  /** Counts one event at `now` (ms). */
  add(now: number): void {
    const slot = Math.floor(now / this.slotMs);
    const at = slot % this.slots;
    if (this.slotOf[at] !== slot) {
      this.slotOf[at] = slot;
      this.counts[at] = 0;
    }
    this.counts[at]!++;
  }

  /** Events within the window ending at `now`. */
  count(now: number): number {
    const oldest = Math.floor(now / this.slotMs) - this.slots + 1;
    let n = 0;
    for (let i = 0; i < this.slots; i++) if (this.slotOf[i]! >= oldest) n += this.counts[i]!;
    return n;
  }

  /** Ms from `now` until fewer than `limit` events remain in the window (0 when already so). */
  retryAfterMs(now: number, limit: number): number {
    const current = Math.floor(now / this.slotMs);
    let n = this.count(now);
    for (let slot = current - this.slots + 1; slot <= current && n >= limit; slot++) {
      const at = ((slot % this.slots) + this.slots) % this.slots;
      if (this.slotOf[at] !== slot) continue;
      n -= this.counts[at]!;
      if (n < limit) return (slot + this.slots) * this.slotMs - now;
    }
    return n < limit ? 0 : this.slots * this.slotMs;
  }
}

/**
 * Reference counts of WAL tickets: one append may feed several buffers (one per measurement, or two
 * when a buffer is sealed half-way), and its WAL entry may be released only when every one of them
 * is in a registered Parquet file.
 */
export class TicketTracker {
  private readonly holds = new Map<unknown, number>();

  constructor(private readonly release: (ticket: unknown) => void) {}

  /** One more holder of `ticket`. */
  hold(ticket: unknown): void {
    this.holds.set(ticket, (this.holds.get(ticket) ?? 0) + 1);
  }

  /** One holder is done; releases the ticket when it was the last. */
  drop(ticket: unknown): void {
    const n = (this.holds.get(ticket) ?? 0) - 1;
    if (n > 0) this.holds.set(ticket, n);
    else {
      this.holds.delete(ticket);
      this.release(ticket);
    }
  }

  /** Releases `ticket` at once when nothing holds it (an append that buffered no rows). */
  releaseIfUnheld(ticket: unknown): void {
    if (!this.holds.has(ticket)) this.release(ticket);
  }

  /** Tickets still held. */
  get size(): number {
    return this.holds.size;
  }
}

/**
 * Reused byte buffers for result batches. Memory touched for the first time costs a page fault per
 * 4 KiB, and on the shared machine that made a fresh buffer 20-200x slower to fill than one already
 * used (copying a 1M-row Arrow result into fresh buffers took ~450 ms, into reused ones ~10 ms). A
 * batch's buffers come back once the response has sent its bytes (see `Emit`'s `sent`), and the next
 * batch of the same result fills them again.
 */

/** Sizes are rounded up to this, so batches whose strings differ a little still reuse each other's buffers. */
const GRAIN = 64 << 10;

/** Free buffers of one result, handed out and given back a batch at a time. */
export class BufferPool {
  private free: Uint8Array[] = [];
  private lent: Uint8Array[] = [];

  /** `n` bytes of possibly old content (the caller writes every byte it sends), from a free buffer when one is large enough. */
  get(n: number): Uint8Array {
    const i = this.free.findIndex((b) => b.byteLength >= n);
    // Small results (one short batch) get exact sizes: nothing comes back to reuse them.
    const buf = i >= 0 ? this.free.splice(i, 1)[0]! : Buffer.allocUnsafeSlow(n <= GRAIN ? n : Math.ceil(n / GRAIN) * GRAIN);
    this.lent.push(buf);
    return buf.subarray(0, n);
  }

  /** The buffers handed out since the last call, to give back with `release` once their bytes are sent. */
  takeLent(): Uint8Array[] {
    const out = this.lent;
    this.lent = [];
    return out;
  }

  /** Gives buffers back for reuse. */
  release(bufs: readonly Uint8Array[]): void {
    for (const b of bufs) this.free.push(b);
  }
}

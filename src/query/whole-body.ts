/**
 * Result bodies held whole, so they leave with a `Content-Length` instead of chunked. Bun's fetch
 * client accumulates a chunked body of 71 MB with `arrayBuffer()` for ~0.9 s of CPU and one with a
 * length for ~0.35 s, and Bun.serve sends a ReadableStream chunked whatever its headers say: only a
 * body handed over whole gets a length.
 *
 * An encoder's batches are copied into one buffer as they come, and each batch's memory goes back to
 * its pool at once (so the next batch refills warm memory, see encode/buffer-pool.ts). The buffer
 * itself is kept for the next result: filling fresh memory costs a page fault per 4 KiB (71 MB fresh:
 * ~350 ms of CPU on the shared machine; refilled: ~7 ms). `Blob` copies it (Bun copies every response
 * body it is handed), so a buffer is free again as soon as its body is built.
 *
 * Memory is bounded by the budget: the bytes held by bodies being built at once, across requests. A
 * body that would go past it streams instead (result-stream.ts). At most KEEP buffers are kept, and
 * none once no body was built for IDLE_MS.
 */
import { ByteBudget } from '../lib/byte-budget.ts';

/** Buffers kept for later results (one per query running at once on a 2-core box). */
const KEEP = 2;
/** Kept buffers are let go after this long without a body built (an idle server gives the memory back). */
const IDLE_MS = 30_000;
/** The first buffer a new body takes, when no kept one is free. */
const FIRST_BYTES = 64 << 10;

/** The bodies of one server: their budget and the buffers they reuse. */
export class WholeBodies {
  /** Bytes all bodies being built at once may hold (limit 0: none, every large result streams). */
  readonly budget: ByteBudget;
  private readonly free: Uint8Array[] = [];
  private idle: ReturnType<typeof setTimeout> | null = null;

  constructor(
    budgetBytes: number,
    private readonly idleMs = IDLE_MS,
  ) {
    this.budget = new ByteBudget(budgetBytes);
  }

  /** A new, empty body; null when the budget is 0. */
  open(): WholeBody | null {
    return this.budget.limit > 0 ? new WholeBody(this) : null;
  }

  /** A buffer of at least `n` bytes: the largest kept one when it is large enough (the warmest fit for a body still growing), else a new one. */
  take(n: number): Uint8Array {
    return this.free.length > 0 && this.free[0]!.byteLength >= n ? this.free.shift()! : Buffer.allocUnsafeSlow(n);
  }

  /** Keeps `buf` for later bodies (the largest KEEP are kept). */
  give(buf: Uint8Array): void {
    this.free.push(buf);
    this.free.sort((a, b) => b.byteLength - a.byteLength);
    this.free.length = Math.min(this.free.length, KEEP);
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => (this.free.length = 0), this.idleMs);
    this.idle.unref?.();
  }
}

/** One result body being built: bytes appended until it is sent whole, or handed to a stream. */
export class WholeBody {
  private buf: Uint8Array | null = null;
  private length = 0;

  constructor(private readonly bodies: WholeBodies) {}

  /** Appends copies of `parts` (whose memory the caller may reuse at once); false, appending nothing, past the budget. */
  add(parts: readonly Uint8Array[]): boolean {
    let n = 0;
    for (const p of parts) n += p.byteLength;
    if (n === 0) return true;
    if (!this.bodies.budget.take(n)) return false;
    const end = this.length + n;
    if (!this.buf || end > this.buf.byteLength) this.grow(end);
    const buf = this.buf!;
    for (const p of parts) {
      buf.set(p, this.length);
      this.length += p.byteLength;
    }
    return true;
  }

  /** The body as a Blob (Bun copies it, so this body's buffer is free again), and the body closed. */
  blob(): Blob {
    const blob = new Blob(this.buf ? [this.buf.subarray(0, this.length) as Uint8Array<ArrayBuffer>] : []);
    this.close();
    return blob;
  }

  /**
   * The bytes so far, for a stream to send, and the body closed; `sent` hands the buffer back for
   * reuse once the stream's reader is done with it (never called: it goes to the garbage collector).
   */
  handOver(): { bytes: Uint8Array; sent: () => void } {
    const buf = this.buf;
    const bytes = buf ? buf.subarray(0, this.length) : new Uint8Array(0);
    this.buf = null;
    this.close();
    return { bytes, sent: () => buf && this.bodies.give(buf) };
  }

  /** Gives the budget (and the buffer, unless handed over) back; idempotent. */
  close(): void {
    this.bodies.budget.give(this.length);
    this.length = 0;
    if (this.buf) this.bodies.give(this.buf);
    this.buf = null;
  }

  private grow(end: number): void {
    const next = this.bodies.take(Math.max(end, Math.min(2 * (this.buf?.byteLength ?? 0), this.bodies.budget.limit), FIRST_BYTES));
    if (this.buf) {
      next.set(this.buf.subarray(0, this.length));
      this.bodies.give(this.buf);
    }
    this.buf = next;
  }
}

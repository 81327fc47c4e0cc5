/**
 * Memory the direct writer reuses from one flush to the next. Every flush used to allocate its
 * column copies, its permutations and its page bodies afresh (about 15 arrays of 800 KB per 100,000
 * rows), and on this box writing into fresh memory cost four times writing into memory touched
 * before (page faults, zeroing, then the allocator's scavenger giving it back): a quarter of the
 * flush. A scratch holds one grow-only buffer per slot; a flush takes views of them, so nothing it
 * takes survives the flush. One scratch serves one flush at a time (`withScratch`); concurrent
 * flushes on one thread (the main-thread fallback) get one each.
 */

/**
 * Memory one scratch keeps: a flush of the default 100,000 rows uses ~20 MB. Past this, further slots
 * are allocated per flush and not kept, so a rare huge flush (one 1M-row request) does not pin its size for good.
 */
const MAX_KEPT_BYTES = 48 << 20;
/** Scratches kept for reuse per thread (a flush worker needs one; the main-thread fallback runs up to flush_workers at once). */
const MAX_FREE = 4;

/** A typed array constructor (view over a buffer, or fresh memory of a length). */
export type TypedCtor<T> = { new (buffer: ArrayBuffer, byteOffset: number, length: number): T; new (length: number): T; BYTES_PER_ELEMENT: number };

/** Grow-only buffers by slot name. Views it hands out hold stale bytes from earlier flushes: callers write every element they read. */
export class Scratch {
  private readonly slots = new Map<string, ArrayBuffer>();
  private kept = 0;

  /** `n` elements over slot `slot` (previous contents, not zeroed). */
  take<T>(slot: string, Ctor: TypedCtor<T>, n: number): T {
    const bytes = n * Ctor.BYTES_PER_ELEMENT;
    let buf = this.slots.get(slot);
    if (buf === undefined || buf.byteLength < bytes) {
      const had = buf?.byteLength ?? 0;
      // 8-byte multiples, so any element type can view the buffer from offset 0.
      const size = (Math.max(bytes, Math.floor(had * 1.5)) + 7) & ~7;
      if (this.kept - had + size > MAX_KEPT_BYTES) return new Ctor(n);
      buf = new ArrayBuffer(size);
      this.slots.set(slot, buf);
      this.kept += size - had;
    }
    return new Ctor(buf, 0, n);
  }

  /** Overwrites every slot with `byte` (see fillKeptScratch). */
  fill(byte: number): void {
    for (const b of this.slots.values()) new Uint8Array(b).fill(byte);
  }
}

const free: Scratch[] = [];

/** Runs `fn` with a scratch no other flush uses meanwhile, then keeps it for the next one. */
export async function withScratch<T>(fn: (s: Scratch) => Promise<T>): Promise<T> {
  const s = free.pop() ?? new Scratch();
  try {
    return await fn(s);
  } finally {
    if (free.length < MAX_FREE) free.push(s);
  }
}

/** For tests: overwrites every kept scratch byte with `byte`, so a test can show that no stale byte reaches a file. */
export function fillKeptScratch(byte: number): number {
  let scratches = 0;
  for (const s of free) (s.fill(byte), scratches++);
  return scratches;
}

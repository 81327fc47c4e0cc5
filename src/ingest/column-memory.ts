/**
 * Reused column memory for bodies parsed on the event loop. Shared memory freshly allocated for every
 * body touches new pages each time: on `bench:ingest` (MessagePack, 10,000-row bodies) the parse took
 * 20-40 page faults per body at ~15 µs each while the resident size grew. Here a body's arrays are
 * carved from blocks that come back once every row carved from them is in a registered Parquet file.
 *
 * Ownership, so that no memory is reused while anything can read it:
 * - `parseInArena` runs one synchronous parse; what it carves belongs to that body's arena, and each
 *   returned batch with rows is tracked. A parse that throws, or a batch never tracked, keeps its
 *   blocks out of the pool for good (the garbage collector frees them like any other memory).
 * - The write buffer `claim`s a batch when it buffers it (once: a second claim gets nothing) and gives
 *   the claims back through `release` only after the flush registered the rows (then no snapshot can
 *   return them) and only when the flush ran once (no retried or abandoned write may still read them).
 * - A reader that keeps a snapshot across awaits holds a `pin`, taken in the tick of the snapshot:
 *   arenas released while a pin taken before the release is held are reused only after it is dropped.
 * - Everything else that reads a batch does so before it is buffered (the WAL encodes it when it
 *   appends; the flush worker answers after writing), so it is done by the time of `release`.
 */
import type { ColumnBatch } from './column-batch.ts';

/** Size of one block; arrays up to a quarter of it are carved from blocks (larger ones get their own memory). */
const BLOCK_BYTES = 4 << 20;
const MAX_CARVED_BYTES = BLOCK_BYTES >> 2;
/**
 * Free blocks kept, and arenas waiting for pins, at most (bytes): about a dozen 100,000-row flushes of
 * the benchmark's shape. Beyond it blocks are left to the garbage collector, so a burst, or a reader
 * that never drops its pin, does not keep memory for good.
 */
const MAX_KEPT_BYTES = 64 << 20;

class Block {
  readonly memory = new SharedArrayBuffer(BLOCK_BYTES);
  used = 0;
  /** Arenas that carved from it, plus one while it is the pool's block to carve from. */
  users = 0;
  /** It held rows before: carved memory is zeroed first, as fresh memory is, unless its carver writes all of it. */
  reused = false;
}

/** One body's carved memory: the blocks it carved from and its batches not yet released. */
class Arena {
  readonly blocks: Block[] = [];
  /** Bytes carved (what waiting for pins keeps from reuse). */
  bytes = 0;
  pending = 0;
  done = false;
}

/** One buffered batch's share of its body's memory, given back by `release` (once; a second time is ignored). */
export class MemoryClaim {
  released = false;
  constructor(readonly arena: Arena) {}
}

/** Counters for tests and profiles. */
export interface ColumnMemoryStats {
  /** Blocks made since start, and carvings served from a block that held rows before. */
  blocksCreated: number;
  reusedCarvings: number;
  freeBlocks: number;
  /** Arenas released but waiting for pins taken before their release. */
  waiting: number;
  pins: number;
}

export class ColumnMemoryPool {
  private current: Block | null = null;
  private open: Arena | null = null;
  private readonly free: Block[] = [];
  private readonly tracked = new WeakMap<ColumnBatch, { arena: Arena; claimed: boolean }>();
  /** Increases at every release; a pin remembers the value at its start. */
  private epoch = 0;
  private readonly pins = new Map<number, number>();
  private readonly waiting: { arena: Arena; epoch: number }[] = [];
  private waitingBytes = 0;
  private counters = { blocksCreated: 0, reusedCarvings: 0 };

  /**
   * Runs `parse` (synchronous) with its shared arrays carved from reused blocks; its batches with rows
   * are tracked for `claim`. A parse inside another gets an arena of its own.
   */
  parseInArena(parse: () => ColumnBatch[]): ColumnBatch[] {
    const outer = this.open;
    const arena = new Arena();
    this.open = arena;
    let batches: ColumnBatch[];
    try {
      batches = parse();
    } finally {
      this.open = outer;
    }
    for (const b of batches) {
      if (b.length === 0 || this.tracked.has(b)) continue;
      this.tracked.set(b, { arena, claimed: false });
      arena.pending++;
    }
    return batches;
  }

  /**
   * `bytes` of memory from the open arena's blocks, or null when no arena is open or the array is large.
   * Zeroed, unless `written`: the caller then writes every byte before anything reads it, and reused
   * memory is handed over as it is (zeroing it was ~3% of the event loop's time on `bench:ingest`).
   */
  carve(bytes: number, written = false): [SharedArrayBuffer, number] | null {
    const arena = this.open;
    if (arena === null || bytes > MAX_CARVED_BYTES) return null;
    const size = (bytes + 7) & ~7; // every array starts 8-byte aligned
    let block = this.current;
    if (block === null || block.used + size > BLOCK_BYTES) block = this.nextBlock();
    if (arena.blocks[arena.blocks.length - 1] !== block && !arena.blocks.includes(block)) {
      arena.blocks.push(block);
      block.users++;
    }
    const at = block.used;
    block.used += size;
    arena.bytes += size;
    if (block.reused) {
      if (!written) new Uint8Array(block.memory, at, size).fill(0);
      this.counters.reusedCarvings++;
    }
    return [block.memory, at];
  }

  /**
   * Takes `batch` over for the write buffer, once; null for a batch not tracked. A second claim (a batch
   * buffered twice, which the first flush's release would leave read by the second): its body's memory is
   * then never reused.
   */
  claim(batch: ColumnBatch): MemoryClaim | null {
    const entry = this.tracked.get(batch);
    if (entry === undefined) return null;
    if (entry.claimed) {
      entry.arena.pending = Infinity;
      return null;
    }
    entry.claimed = true;
    return new MemoryClaim(entry.arena);
  }

  /** The claimed batches are in registered files and out of every snapshot from this tick on. */
  release(claims: readonly MemoryClaim[]): void {
    if (claims.length === 0) return;
    const epoch = this.epoch++;
    for (const claim of claims) {
      if (claim.released) continue;
      claim.released = true;
      const arena = claim.arena;
      if (arena.done || --arena.pending > 0) continue;
      arena.done = true;
      if (this.pins.size === 0) this.retire(arena);
      else if (this.waitingBytes + arena.bytes <= MAX_KEPT_BYTES) {
        this.waiting.push({ arena, epoch });
        this.waitingBytes += arena.bytes;
      }
      // else: left to the garbage collector (its blocks never come back).
    }
  }

  /** Keeps what a snapshot taken in this tick holds from being reused until the returned function is called. */
  pin(): () => void {
    const epoch = this.epoch;
    this.pins.set(epoch, (this.pins.get(epoch) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const n = this.pins.get(epoch)! - 1;
      if (n > 0) this.pins.set(epoch, n);
      else this.pins.delete(epoch);
      this.retireUnpinned();
    };
  }

  stats(): ColumnMemoryStats {
    let pins = 0;
    for (const n of this.pins.values()) pins += n;
    return { ...this.counters, freeBlocks: this.free.length, waiting: this.waiting.length, pins };
  }

  /** Arenas released before the oldest pin still held was taken. */
  private retireUnpinned(): void {
    let oldest = Infinity;
    for (const e of this.pins.keys()) if (e < oldest) oldest = e;
    // Released in epoch order, so the ones due are at the front.
    while (this.waiting.length > 0 && this.waiting[0]!.epoch < oldest) {
      const { arena } = this.waiting.shift()!;
      this.waitingBytes -= arena.bytes;
      this.retire(arena);
    }
  }

  private retire(arena: Arena): void {
    for (const block of arena.blocks) this.drop(block);
  }

  private drop(block: Block): void {
    if (--block.users > 0) return;
    if (this.free.length >= MAX_KEPT_BYTES / BLOCK_BYTES) return;
    block.used = 0;
    block.reused = true;
    this.free.push(block);
  }

  private nextBlock(): Block {
    if (this.current !== null) this.drop(this.current);
    let block = this.free.pop();
    if (block === undefined) {
      block = new Block();
      this.counters.blocksCreated++;
    }
    block.users++;
    this.current = block;
    return block;
  }
}

/** The event loop's pool (each thread has its own module instance; only the event loop parses in arenas). */
export const columnMemory = new ColumnMemoryPool();

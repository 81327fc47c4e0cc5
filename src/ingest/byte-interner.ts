/**
 * A bounded cache from byte slices to strings, so repeated tag keys and values (host=host_42 on a
 * million lines) are decoded once and shared instead of allocating a string per occurrence.
 */

/** FNV-1a offset basis; callers fold bytes in with `hashByte` while they scan. */
export const HASH_SEED = -2128831035;

/** Folds one byte into an FNV-1a hash. */
export function hashByte(hash: number, byte: number): number {
  return Math.imul(hash ^ byte, 16777619);
}

/** FNV-1a hash of bytes [start, end), the same value `hashByte` folding produces. */
export function hashBytes(buf: Uint8Array, start: number, end: number): number {
  let h = HASH_SEED;
  for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i], 16777619);
  return h;
}

/** Number of slots: slot numbers from `slotOf` are below this. */
export const SLOTS = 8192; // power of two; at most half are used so probes stay short
const MAX_ENTRIES = SLOTS >> 1;
const MAX_KEY_BYTES = 256; // longer values are rarely repeated: not worth the arena space
const ARENA_BYTES = 1 << 20;

/** Open-addressing table of byte slices -> strings; when it fills up it starts over (bounded memory). */
export class ByteInterner {
  private readonly hashes = new Int32Array(SLOTS);
  private readonly offsets = new Int32Array(SLOTS);
  private readonly lengths = new Int32Array(SLOTS).fill(-1);
  private readonly strings: string[] = new Array<string>(SLOTS).fill('');
  private readonly arena = new Uint8Array(ARENA_BYTES);
  private arenaUsed = 0;
  private count = 0;

  /** Bumped whenever the table starts over: slot numbers handed out before are void from then on. */
  epoch = 0;

  /** The string cached for bytes [start, end) of `buf` with FNV-1a hash `hash`, or null when absent. */
  get(buf: Uint8Array, start: number, end: number, hash: number): string | null {
    const slot = this.find(buf, start, end, hash);
    return slot < 0 ? null : this.strings[slot]!;
  }

  /** Remembers `str` as the decoding of bytes [start, end); call after `get` returned null. */
  set(buf: Uint8Array, start: number, end: number, hash: number, str: string): void {
    this.insert(buf, start, end, hash, str);
  }

  /**
   * The slot holding bytes [start, end), decoding and caching them on a miss; -1 when the value is
   * too long to cache. A slot number names the same string until `epoch` changes.
   */
  slotOf(buf: Buffer, start: number, end: number, hash: number): number {
    const slot = this.find(buf, start, end, hash);
    if (slot >= 0) return slot;
    return this.insert(buf, start, end, hash, buf.toString('utf8', start, end));
  }

  /** The string of a slot returned by `slotOf` (same epoch). */
  stringAt(slot: number): string {
    return this.strings[slot]!;
  }

  private find(buf: Uint8Array, start: number, end: number, hash: number): number {
    const len = end - start;
    const arena = this.arena;
    let slot = hash & (SLOTS - 1);
    for (;;) {
      const l = this.lengths[slot];
      if (l === -1) return -1;
      if (l === len && this.hashes[slot] === hash) {
        const off = this.offsets[slot]!;
        let i = 0;
        while (i < len && arena[off + i] === buf[start + i]) i++;
        if (i === len) return slot;
      }
      slot = (slot + 1) & (SLOTS - 1);
    }
  }

  private insert(buf: Uint8Array, start: number, end: number, hash: number, str: string): number {
    const len = end - start;
    if (len > MAX_KEY_BYTES) return -1;
    if (this.count >= MAX_ENTRIES || this.arenaUsed + len > ARENA_BYTES) this.clear();
    let slot = hash & (SLOTS - 1);
    while (this.lengths[slot] !== -1) slot = (slot + 1) & (SLOTS - 1);
    this.arena.set(buf.subarray(start, end), this.arenaUsed);
    this.hashes[slot] = hash;
    this.offsets[slot] = this.arenaUsed;
    this.lengths[slot] = len;
    this.strings[slot] = str;
    this.arenaUsed += len;
    this.count++;
    return slot;
  }

  private clear(): void {
    this.epoch++;
    this.lengths.fill(-1);
    this.strings.fill('');
    this.arenaUsed = 0;
    this.count = 0;
  }
}

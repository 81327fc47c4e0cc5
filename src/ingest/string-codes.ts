/**
 * Builds a string column as dictionary codes while a parser reads it (see StringDictionary in
 * column-batch.ts). The per-row work is the byte hash and interner probe the parser already paid
 * for, plus one typed-array lookup: no JS string is stored per row, so big batches neither allocate
 * nor retain arrays of string pointers, and the flush path copies codes instead of hashing strings.
 */
import { type ByteInterner, hashBytes, SLOTS } from './byte-interner.ts';
import type { StringDictionary } from './column-batch.ts';
import { sharedUint32, trimShared } from './shared-arrays.ts';

/**
 * Slot tables of finished columns, for the next ones: a fresh 32 KiB table for every string column of
 * every body cost page faults on the event loop (measured on a 10,000-row MessagePack body with two tag
 * columns: 6 faults and 0.073 s per million rows for the parse, 3 faults and 0.066 s with reuse).
 */
const spareSlotTables: Uint32Array[] = [];
const MAX_SPARE_SLOT_TABLES = 16;
const NO_SLOTS = new Uint32Array(0);
// An epoch no interner has: the next lookup after `finish` takes a table again.
const FINISHED = -1;

/** One string column's codes under construction; its ColumnBuilder sets every row before `finish` (skipped rows: `setNull`). */
export class StringCodes {
  codes: Uint32Array;
  readonly dictionary: (string | null)[] = [null];
  /** Interner slot -> code (0 = not seen yet), valid while the interner's epoch is `epoch`. */
  private slotCodes: Uint32Array;
  private epoch: number;
  /** Codes of values given as strings (`setValue`), so a repeated one gets one entry. */
  private readonly decoded = new Map<string, number>();

  constructor(
    capacity: number,
    private readonly interner: ByteInterner,
  ) {
    // Not zeroed when reused: every row up to the finished length is set (ColumnBuilder sets skipped rows NULL).
    this.codes = sharedUint32(capacity, true);
    this.slotCodes = takeSlotTable();
    this.epoch = interner.epoch;
  }

  /** Stores the UTF-8 string in bytes [start, end) of `buf` at `row`. */
  set(row: number, buf: Buffer, start: number, end: number): void {
    this.setHashed(row, buf, start, end, hashBytes(buf, start, end));
  }

  /** `set` for a parser that already folded the bytes into their FNV-1a hash while scanning. */
  setHashed(row: number, buf: Buffer, start: number, end: number, hash: number): void {
    if (row >= this.codes.length) this.grow(row + 1);
    const interner = this.interner;
    const slot = interner.slotOf(buf, start, end, hash);
    let code: number;
    if (slot < 0) {
      // Too long to intern: rarely repeated, so it just gets its own entry.
      code = this.dictionary.push(buf.toString('utf8', start, end)) - 1;
    } else {
      // The interner started over (its old slot numbers now name other strings), or `finish` gave the table back.
      if (interner.epoch !== this.epoch) this.resetSlots();
      code = this.slotCodes[slot]!;
      if (code === 0) code = this.slotCodes[slot] = this.dictionary.push(interner.stringAt(slot)) - 1;
    }
    this.codes[row] = code;
  }

  /** Stores a decoded string (an escaped line-protocol value, say) at `row`; null is NULL. */
  setValue(row: number, value: string | null): void {
    if (value === null) return this.setNull(row);
    if (row >= this.codes.length) this.grow(row + 1);
    let code = this.decoded.get(value);
    if (code === undefined) this.decoded.set(value, (code = this.dictionary.push(value) - 1));
    this.codes[row] = code;
  }

  /** Marks `row` NULL (a row may be overwritten while a value is being replaced). */
  setNull(row: number): void {
    if (row >= this.codes.length) this.grow(row + 1);
    this.codes[row] = 0;
  }

  /** The finished codes for the first `length` rows; the slot table goes back for the next column. */
  finish(length: number): StringDictionary {
    if (length > this.codes.length) this.grow(length);
    const codes = trimShared(this.codes, length);
    if (this.slotCodes !== NO_SLOTS && spareSlotTables.length < MAX_SPARE_SLOT_TABLES) spareSlotTables.push(this.slotCodes);
    this.slotCodes = NO_SLOTS;
    this.epoch = FINISHED;
    return { codes, dictionary: this.dictionary };
  }

  private resetSlots(): void {
    if (this.slotCodes === NO_SLOTS) this.slotCodes = takeSlotTable();
    else this.slotCodes.fill(0);
    this.epoch = this.interner.epoch;
  }

  private grow(min: number): void {
    const codes = new Uint32Array(Math.max(min, this.codes.length * 2));
    codes.set(this.codes);
    this.codes = codes;
  }
}

/** A zeroed slot table: a spare one when there is one. */
function takeSlotTable(): Uint32Array {
  const spare = spareSlotTables.pop();
  return spare === undefined ? new Uint32Array(SLOTS) : spare.fill(0);
}

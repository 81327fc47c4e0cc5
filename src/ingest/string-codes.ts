/**
 * Builds a string column as dictionary codes while a parser reads it (see StringDictionary in
 * column-batch.ts). The per-row work is the byte hash and interner probe the parser already paid
 * for, plus one typed-array lookup: no JS string is stored per row, so big batches neither allocate
 * nor retain arrays of string pointers, and the flush path copies codes instead of hashing strings.
 */
import { type ByteInterner, hashBytes, SLOTS } from './byte-interner.ts';
import type { StringDictionary } from './column-batch.ts';
import { sharedUint32, trimShared } from './shared-arrays.ts';

/** One string column's codes under construction; rows never set stay 0 (NULL). */
export class StringCodes {
  codes: Uint32Array;
  readonly dictionary: (string | null)[] = [null];
  /** Interner slot -> code (0 = not seen yet), valid while the interner's epoch is `epoch`. */
  private readonly slotCodes = new Uint32Array(SLOTS);
  private epoch: number;
  /** Codes of values given as strings (`setValue`), so a repeated one gets one entry. */
  private readonly decoded = new Map<string, number>();

  constructor(
    capacity: number,
    private readonly interner: ByteInterner,
  ) {
    this.codes = sharedUint32(capacity);
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
      // The interner started over: its old slot numbers now name other strings.
      if (interner.epoch !== this.epoch) (this.slotCodes.fill(0), (this.epoch = interner.epoch));
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

  /** The finished codes for the first `length` rows. */
  finish(length: number): StringDictionary {
    if (length > this.codes.length) this.grow(length);
    const codes = trimShared(this.codes, length);
    return { codes, dictionary: this.dictionary };
  }

  private grow(min: number): void {
    const codes = new Uint32Array(Math.max(min, this.codes.length * 2));
    codes.set(this.codes);
    this.codes = codes;
  }
}

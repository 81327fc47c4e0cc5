/**
 * Decoding of line-protocol tokens (names, tag values, string fields) from bytes to strings,
 * with escape removal and interning of the repeated ones.
 */
import { ByteInterner, hashBytes } from '../byte-interner.ts';
import { StringCodes } from '../string-codes.ts';

const BACKSLASH = 92;
const QUOTE = 34;
const COMMA = 44;
const SPACE = 32;
const EQUALS = 61;

// One interner per process: parsing is synchronous, and tag keys and values repeat across requests too.
const interner = new ByteInterner();
let scratch = Buffer.allocUnsafe(256);

/** Dictionary codes for a tag column of `capacity` rows, sharing this interner (see ColumnBuilder.setStringHashed). */
export function tagCodes(capacity: number): StringCodes {
  return new StringCodes(capacity, interner);
}

/** Name (measurement, tag key, field key) in bytes [start, end), unescaped and interned. */
export function decodeName(buf: Buffer, start: number, end: number, escaped: boolean): string {
  return decodeTagValue(buf, start, end, hashBytes(buf, start, end), escaped);
}

/** Tag value in bytes [start, end) whose FNV-1a hash the scanner computed; unescaped and interned. */
export function decodeTagValue(buf: Buffer, start: number, end: number, hash: number, escaped: boolean): string {
  const cached = interner.get(buf, start, end, hash);
  if (cached !== null) return cached;
  const str = escaped ? unescape(buf, start, end, false) : buf.toString('utf8', start, end);
  interner.set(buf, start, end, hash, str);
  return str;
}

/** Contents of a quoted string field (between the quotes): `\"` and `\\` are escapes, other backslashes are literal. */
export function decodeStringField(buf: Buffer, start: number, end: number, escaped: boolean): string {
  return escaped ? unescape(buf, start, end, true) : buf.toString('utf8', start, end);
}

/** Raw text of bytes [start, end) for error messages, shortened to stay readable. */
export function snippet(buf: Buffer, start: number, end: number): string {
  const text = buf.toString('utf8', start, Math.min(end, start + 64));
  return end - start > 64 ? `${text}…` : text;
}

/**
 * Removes escapes. In names and tag values `\,` `\ ` `\=` and `\\` stand for the second character;
 * in string fields only `\"` and `\\`. A backslash before any other byte is kept as is.
 */
function unescape(buf: Buffer, start: number, end: number, stringField: boolean): string {
  if (scratch.length < end - start) scratch = Buffer.allocUnsafe(Math.max(end - start, scratch.length * 2));
  let n = 0;
  for (let i = start; i < end; i++) {
    let b = buf[i];
    if (b === BACKSLASH && i + 1 < end) {
      const next = buf[i + 1];
      const isEscape = stringField
        ? next === QUOTE || next === BACKSLASH
        : next === COMMA || next === SPACE || next === EQUALS || next === BACKSLASH;
      if (isEscape) {
        b = next;
        i++;
      }
    }
    scratch[n++] = b;
  }
  return scratch.toString('utf8', 0, n);
}

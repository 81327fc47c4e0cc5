/**
 * Field extraction for two-line element sets (NORAD/Space-Track fixed-column format). Columns are
 * 1-based in the format's documentation and 0-based slices here; every function either returns a
 * value or throws a TleFieldError naming the field, so the parser can report the line and the reason.
 */

/** A field of an element line that cannot be read; the parser adds the line number. */
export class TleFieldError extends Error {}

/** Length of a complete element line, checksum included. */
export const TLE_LINE_LENGTH = 69;

/**
 * The modulo-10 checksum of an element line: the sum of its digits over columns 1-68, with each
 * minus sign counting 1 and every other character 0.
 */
export function tleChecksum(line: string): number {
  let sum = 0;
  for (let i = 0; i < TLE_LINE_LENGTH - 1 && i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c >= 48 && c <= 57) sum += c - 48;
    else if (c === 45) sum += 1;
  }
  return sum % 10;
}

/** Throws unless `line` (trailing blanks removed) is a full element line `no` with a correct checksum. */
export function checkElementLine(line: string, no: 1 | 2): void {
  if (line.length !== TLE_LINE_LENGTH) throw new TleFieldError(`element line ${no} must be ${TLE_LINE_LENGTH} characters long, got ${line.length}`);
  if (line[0] !== String(no) || line[1] !== ' ') throw new TleFieldError(`element line ${no} must start with '${no} '`);
  const expected = line.charCodeAt(TLE_LINE_LENGTH - 1) - 48;
  if (!(expected >= 0 && expected <= 9)) throw new TleFieldError(`element line ${no} has no checksum digit in column 69 (found '${line[TLE_LINE_LENGTH - 1]}')`);
  const actual = tleChecksum(line);
  if (actual !== expected) throw new TleFieldError(`checksum mismatch on element line ${no}: column 69 says ${expected}, the line sums to ${actual}`);
}

/** Columns [from, to] (1-based, inclusive) of `line`, trimmed. */
export function field(line: string, from: number, to: number): string {
  return line.slice(from - 1, to).trim();
}

/** A decimal number in columns [from, to]; `what` names the field in the error. */
export function decimalField(line: string, from: number, to: number, what: string): number {
  const text = field(line, from, to);
  // Number('') is 0 and Number('0x1f') is 31: only plain decimals (a leading '.' allowed, as in '-.00002182') pass.
  if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text)) throw new TleFieldError(`cannot read ${what} from columns ${from}-${to}: '${text}'`);
  return Number(text);
}

/** An unsigned integer in columns [from, to]; blank counts as 0 (revolution numbers are blank-padded). */
export function integerField(line: string, from: number, to: number, what: string): number {
  const text = field(line, from, to);
  if (text === '') return 0;
  if (!/^\d+$/.test(text)) throw new TleFieldError(`cannot read ${what} from columns ${from}-${to}: '${text}'`);
  return Number(text);
}

/** A value written with an assumed leading decimal point and a power-of-ten exponent: ' 12345-3' = 0.12345e-3. */
export function exponentField(line: string, from: number, to: number, what: string): number {
  const text = field(line, from, to);
  const m = /^([+-]?)(\d{1,5})([+-]?\d)$/.exec(text);
  if (!m) throw new TleFieldError(`cannot read ${what} from columns ${from}-${to}: '${text}'`);
  return Number(`${m[1]}0.${m[2]}e${m[3]}`);
}

/** A number with an assumed leading decimal point: '0006703' = 0.0006703 (eccentricity). */
export function impliedDecimalField(line: string, from: number, to: number, what: string): number {
  const text = field(line, from, to);
  if (!/^\d+$/.test(text)) throw new TleFieldError(`cannot read ${what} from columns ${from}-${to}: '${text}'`);
  return Number(`0.${text}`);
}

/**
 * The epoch in columns 19-32 (`YYDDD.DDDDDDDD`: two-digit year, 57-99 meaning 19xx and 00-56 20xx, then
 * the day of the year with its fraction) as epoch microseconds, UTC.
 */
export function epochField(line: string): number {
  const text = field(line, 19, 32);
  const m = /^(\d{2})(\d{3})(\.\d*)?$/.exec(text.replace(/ /g, '0'));
  if (!m) throw new TleFieldError(`cannot read the epoch from columns 19-32: '${text}'`);
  const yy = Number(m[1]);
  const year = yy < 57 ? 2000 + yy : 1900 + yy;
  const day = Number(m[2]);
  const daysInYear = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 366 : 365;
  if (day < 1 || day > daysInYear) throw new TleFieldError(`cannot read the epoch from columns 19-32: day of year ${day} is outside 1-${daysInYear}`);
  const fraction = m[3] && m[3].length > 1 ? Number(`0${m[3]}`) : 0;
  return Date.UTC(year, 0, 1) * 1000 + (day - 1) * 86_400_000_000 + Math.round(fraction * 86_400_000_000);
}

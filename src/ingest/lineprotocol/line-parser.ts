/**
 * The line-protocol scanner: one pass over the bytes, values written straight into typed columns.
 * It relies on every line ending in '\n' (the caller guarantees it), which lets the inner loops
 * stop on the newline instead of checking bounds on every byte.
 */
import { measurementNameProblem } from '../../lib/names.ts';
import { hashByte, HASH_SEED } from '../byte-interner.ts';
import type { ColumnBatch } from '../column-batch.ts';
import { KIND_BOOL, KIND_FLOAT, KIND_STRING } from '../column-builder.ts';
import { MeasurementState } from './measurement-state.ts';
import { ScannedNumber, scanFieldNumber, scanTimestamp } from './numbers.ts';
import { decodeName, decodeStringField, decodeTagValue, snippet } from './tokens.ts';

const TAB = 9;
const NL = 10;
const CR = 13;
const SPACE = 32;
const QUOTE = 34;
const HASH = 35;
const COMMA = 44;
const MINUS = 45;
const DOT = 46;
const EQUALS = 61;
const BACKSLASH = 92;

/** A rejected line: 1-based line number and why. */
export interface LineError {
  line: number;
  message: string;
}

/** Most line errors kept in full; the rest are only counted (a garbage upload should not cost memory per line). */
export const MAX_LINE_ERRORS = 1000;

/** Parses line protocol into per-measurement columns; one instance per request body. */
export class LineParser {
  readonly errors: LineError[] = [];
  /** Non-blank, non-comment lines seen, accepted or not. */
  lines = 0;
  rejected = 0;
  private readonly measurements = new Map<string, MeasurementState>();
  private lastKey: Uint8Array | null = null;
  private lastState: MeasurementState | null = null;
  private readonly num = new ScannedNumber();
  private errorMessage = '';
  private errorPos = 0;

  /**
   * @param expectedRows the body's estimated line count: the first measurement is sized for it (most
   * bodies hold one); later ones start small and grow.
   */
  constructor(
    private readonly precision: number,
    private readonly now: number,
    private readonly expectedRows = 0,
  ) {}

  /** Parses every line of `buf`, which must end with '\n'; `firstLine` numbers its first line. Returns the next line number. */
  parse(buf: Buffer, firstLine: number): number {
    const n = buf.length;
    let line = firstLine;
    let pos = 0;
    while (pos < n) {
      let b = buf[pos];
      while (b === SPACE || b === TAB) b = buf[++pos];
      if (b === NL) pos++;
      else if (b === CR && buf[pos + 1] === NL) pos += 2;
      else if (b === HASH) pos = buf.indexOf(NL, pos) + 1;
      else {
        this.lines++;
        const next = this.parseLine(buf, pos);
        if (next >= 0) pos = next;
        else {
          this.reject(line);
          pos = buf.indexOf(NL, this.errorPos) + 1;
        }
      }
      line++;
    }
    return line;
  }

  /** One ColumnBatch per measurement that has accepted rows. */
  finish(): ColumnBatch[] {
    const out: ColumnBatch[] = [];
    for (const state of this.measurements.values()) if (state.batch.len > 0) out.push(state.batch.finish());
    return out;
  }

  /** Parses the line at `pos`; returns the position after its '\n', or -1 with the error recorded. */
  private parseLine(buf: Buffer, pos: number): number {
    const nameStart = pos;
    let escaped = false;
    let b = buf[pos];
    while (b !== COMMA && b !== SPACE) {
      if (b === NL) return this.fail(pos, 'missing fields');
      if (b === BACKSLASH) {
        escaped = true;
        if (buf[pos + 1] !== NL) pos++;
      }
      b = buf[++pos];
    }
    if (pos === nameStart) return this.fail(pos, 'missing measurement name');
    const m = this.measurement(buf, nameStart, pos, escaped);
    if (m === null) return this.fail(pos, this.errorMessage);
    const row = m.batch.len;

    for (let i = 0; b === COMMA; i++) {
      const keyStart = ++pos;
      let keyEscaped = false;
      b = buf[pos];
      while (b !== EQUALS) {
        if (b === COMMA || b === SPACE || b === NL) return this.failRow(m, pos, `cannot parse tag '${snippet(buf, keyStart, pos)}': missing '='`);
        if (b === BACKSLASH) {
          keyEscaped = true;
          if (buf[pos + 1] !== NL) pos++;
        }
        b = buf[++pos];
      }
      const keyEnd = pos;
      if (keyEnd === keyStart) return this.failRow(m, pos, 'cannot parse tag: missing tag key');
      const valueStart = ++pos;
      let valueEscaped = false;
      let hash = HASH_SEED;
      b = buf[pos];
      while (b !== COMMA && b !== SPACE && b !== NL) {
        if (b === BACKSLASH && buf[pos + 1] !== NL) {
          valueEscaped = true;
          hash = hashByte(hash, b);
          b = buf[++pos];
        }
        hash = hashByte(hash, b);
        b = buf[++pos];
      }
      if (pos === valueStart) return this.failRow(m, pos, `cannot parse tag '${snippet(buf, keyStart, keyEnd)}': missing tag value`);
      const col = m.tagColumn(i, buf, keyStart, keyEnd, keyEscaped);
      if (col === null) return this.failRow(m, pos, m.problem);
      if (col.len > row) return this.failRow(m, pos, `duplicate tag key '${col.name}'`);
      if (col.codes !== null && !valueEscaped) col.setStringHashed(row, buf, valueStart, pos, hash);
      else col.setString(row, decodeTagValue(buf, valueStart, pos, hash, valueEscaped));
    }

    if (b !== SPACE) return this.failRow(m, pos, 'missing fields');
    do b = buf[++pos];
    while (b === SPACE);
    if (b === NL || b === CR) return this.failRow(m, pos, 'missing fields');

    for (let i = 0; ; i++) {
      const keyStart = pos;
      let keyEscaped = false;
      while (b !== EQUALS) {
        if (b === COMMA || b === SPACE || b === NL) {
          const what = pos === keyStart ? 'missing field key' : `cannot parse field '${snippet(buf, keyStart, pos)}': missing '=' and value`;
          return this.failRow(m, pos, what);
        }
        if (b === BACKSLASH) {
          keyEscaped = true;
          if (buf[pos + 1] !== NL) pos++;
        }
        b = buf[++pos];
      }
      const keyEnd = pos;
      if (keyEnd === keyStart) return this.failRow(m, pos, 'missing field key');
      const valueStart = ++pos;
      b = buf[pos];
      if ((b >= 48 && b <= 57) || b === MINUS || b === DOT) {
        pos = scanFieldNumber(buf, pos, this.num);
        if (pos < 0) return this.failRow(m, valueStart, this.fieldProblem(buf, keyStart, keyEnd, this.num.error, valueStart));
        if (!endsValue(buf, pos)) return this.failRow(m, pos, this.fieldProblem(buf, keyStart, keyEnd, 'invalid value', valueStart));
        const col = m.fieldColumn(i, buf, keyStart, keyEnd, keyEscaped, this.num.kind);
        if (col === null) return this.failRow(m, pos, m.problem);
        if (col.kind === KIND_FLOAT) col.setFloat(row, this.num.value);
        else if (this.num.isBig) col.setBigInt(row, this.num.big);
        else col.setInt(row, this.num.value);
      } else if (b === QUOTE) {
        let stringEscaped = false;
        b = buf[++pos];
        while (b !== QUOTE) {
          if (b === NL) return this.failRow(m, pos, this.fieldProblem(buf, keyStart, keyEnd, 'unterminated string', -1));
          if (b === BACKSLASH) {
            stringEscaped = true;
            const next = buf[pos + 1];
            if (next === QUOTE || next === BACKSLASH) pos++;
          }
          b = buf[++pos];
        }
        const valueEnd = pos++;
        if (!endsValue(buf, pos)) return this.failRow(m, pos, this.fieldProblem(buf, keyStart, keyEnd, 'unexpected text after the closing quote', -1));
        const col = m.fieldColumn(i, buf, keyStart, keyEnd, keyEscaped, KIND_STRING);
        if (col === null) return this.failRow(m, pos, m.problem);
        col.setString(row, decodeStringField(buf, valueStart + 1, valueEnd, stringEscaped));
      } else {
        while (!endsValue(buf, pos)) pos++;
        const value = booleanValue(buf, valueStart, pos);
        if (value < 0) {
          const problem = pos === valueStart
            ? this.fieldProblem(buf, keyStart, keyEnd, 'missing field value', -1)
            : this.fieldProblem(buf, keyStart, keyEnd, 'invalid value', valueStart);
          return this.failRow(m, pos, problem);
        }
        const col = m.fieldColumn(i, buf, keyStart, keyEnd, keyEscaped, KIND_BOOL);
        if (col === null) return this.failRow(m, pos, m.problem);
        col.setBool(row, value);
      }
      b = buf[pos];
      if (b !== COMMA) break;
      b = buf[++pos];
    }

    while (b === SPACE) b = buf[++pos];
    let time = this.now;
    if (b !== NL && !(b === CR && buf[pos + 1] === NL)) {
      const start = pos;
      pos = scanTimestamp(buf, pos, this.precision, this.num);
      if (pos < 0) return this.failRow(m, start, `cannot parse timestamp '${snippet(buf, start, buf.indexOf(NL, start))}': ${this.num.error}`);
      time = this.num.value;
      b = buf[pos];
      while (b === SPACE || b === TAB) b = buf[++pos];
      if (b === CR && buf[pos + 1] === NL) b = buf[++pos];
      if (b !== NL) return this.failRow(m, pos, `cannot parse timestamp '${snippet(buf, start, buf.indexOf(NL, start))}': invalid timestamp`);
    } else if (b === CR) {
      pos++;
    }
    m.batch.commitRow(time);
    return pos + 1;
  }

  /** State of the measurement named by bytes [start, end); the previous line's measurement is checked first. */
  private measurement(buf: Buffer, start: number, end: number, escaped: boolean): MeasurementState | null {
    const last = this.lastKey;
    if (last !== null && last.length === end - start) {
      let j = 0;
      while (j < last.length && last[j] === buf[start + j]) j++;
      if (j === last.length) return this.lastState;
    }
    const name = decodeName(buf, start, end, escaped);
    let state = this.measurements.get(name);
    if (state === undefined) {
      const problem = measurementNameProblem(name);
      if (problem !== null) {
        this.errorMessage = problem;
        return null;
      }
      state = new MeasurementState(name, this.measurements.size === 0 ? this.expectedRows : 0);
      this.measurements.set(name, state);
    }
    this.lastKey = buf.subarray(start, end); // a view into the body, which outlives this parser
    this.lastState = state;
    return state;
  }

  private fieldProblem(buf: Buffer, keyStart: number, keyEnd: number, what: string, valueStart: number): string {
    const field = `cannot parse field '${snippet(buf, keyStart, keyEnd)}'`;
    if (valueStart < 0) return `${field}: ${what}`;
    let end = valueStart;
    while (!endsValue(buf, end)) end++;
    return `${field}: ${what} '${snippet(buf, valueStart, end)}'`;
  }

  private failRow(m: MeasurementState, pos: number, message: string): number {
    m.rollback();
    return this.fail(pos, message);
  }

  private fail(pos: number, message: string): number {
    this.errorPos = pos;
    this.errorMessage = message;
    return -1;
  }

  private reject(line: number): void {
    this.rejected++;
    if (this.errors.length < MAX_LINE_ERRORS) this.errors.push({ line, message: this.errorMessage });
  }
}

/** True when the byte at `pos` ends a field value: ',', ' ', '\n' or "\r\n". */
function endsValue(buf: Buffer, pos: number): boolean {
  const b = buf[pos];
  return b === COMMA || b === SPACE || b === NL || (b === CR && buf[pos + 1] === NL);
}

/** 1 or 0 for the accepted spellings of true and false in bytes [start, end), -1 otherwise. */
function booleanValue(buf: Buffer, start: number, end: number): number {
  const len = end - start;
  const c = buf[start];
  if (len === 1) return c === 116 || c === 84 ? 1 : c === 102 || c === 70 ? 0 : -1;
  if (len !== 4 && len !== 5) return -1;
  const word = buf.toString('latin1', start, end);
  if (word === 'true' || word === 'True' || word === 'TRUE') return 1;
  if (word === 'false' || word === 'False' || word === 'FALSE') return 0;
  return -1;
}

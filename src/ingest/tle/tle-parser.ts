/**
 * Two-line element sets (2-line form, and 3-line form with a title line, optionally written `0 NAME`)
 * -> one ColumnBatch with a row per good set. Text arrives in chunks of any size (a set may span
 * two chunks); bad sets are skipped and reported with the line that is wrong and why.
 */
import type { ColumnBatch } from '../column-batch.ts';
import { BatchBuilder, type ColumnBuilder, KIND_FLOAT, KIND_INT, KIND_STRING } from '../column-builder.ts';
import {
  checkElementLine,
  decimalField,
  epochField,
  exponentField,
  field,
  impliedDecimalField,
  integerField,
  TleFieldError,
} from './tle-fields.ts';

/** Bad element sets beyond this many are counted but not listed. */
export const MAX_TLE_ERRORS = 100;

/** One rejected element set: the 1-based line that is wrong, and why. */
export interface TleError {
  line: number;
  satellite: string | null;
  message: string;
}

/** The parsed sets and the rejected ones (`errors` lists at most MAX_TLE_ERRORS of `rejected`). */
export interface TleResult {
  batch: ColumnBatch;
  rejected: number;
  errors: TleError[];
}

/** Columns of a parsed set, in order; `satellite_number` is the tag (compaction keeps one row per satellite and epoch). */
export const TLE_COLUMNS = [
  'satellite_number',
  'name',
  'classification',
  'international_designator',
  'mean_motion',
  'mean_motion_dot',
  'mean_motion_ddot',
  'bstar',
  'inclination',
  'raan',
  'eccentricity',
  'arg_of_perigee',
  'mean_anomaly',
  'revolution_number',
  'element_set_number',
] as const;

type Line = { no: number; text: string };

/** Streaming TLE parser: `push` chunks of text, then `finish`. */
export class TleParser {
  private readonly out: BatchBuilder;
  private readonly cols: Record<(typeof TLE_COLUMNS)[number], ColumnBuilder>;
  private carry = '';
  private lineNo = 0;
  private title: Line | null = null;
  private first: Line | null = null;
  private rejected = 0;
  private readonly errors: TleError[] = [];

  constructor(measurement: string) {
    this.out = new BatchBuilder(measurement);
    const b = this.out;
    const str = (n: string, tag = false) => b.addColumn(n, KIND_STRING, tag);
    this.cols = {
      satellite_number: str('satellite_number', true),
      name: str('name'),
      classification: str('classification'),
      international_designator: str('international_designator'),
      mean_motion: b.addColumn('mean_motion', KIND_FLOAT, false),
      mean_motion_dot: b.addColumn('mean_motion_dot', KIND_FLOAT, false),
      mean_motion_ddot: b.addColumn('mean_motion_ddot', KIND_FLOAT, false),
      bstar: b.addColumn('bstar', KIND_FLOAT, false),
      inclination: b.addColumn('inclination', KIND_FLOAT, false),
      raan: b.addColumn('raan', KIND_FLOAT, false),
      eccentricity: b.addColumn('eccentricity', KIND_FLOAT, false),
      arg_of_perigee: b.addColumn('arg_of_perigee', KIND_FLOAT, false),
      mean_anomaly: b.addColumn('mean_anomaly', KIND_FLOAT, false),
      revolution_number: b.addColumn('revolution_number', KIND_INT, false),
      element_set_number: b.addColumn('element_set_number', KIND_INT, false),
    };
  }

  /** Number of good sets so far. */
  get sets(): number {
    return this.out.len;
  }

  /** Feeds the next piece of text (any split, even inside a line). */
  push(text: string): void {
    const lines = (this.carry + text).split('\n');
    this.carry = lines.pop()!;
    for (const l of lines) this.line(l);
  }

  /** Ends the input: a set left incomplete is reported; returns the batch and the errors. */
  finish(): TleResult {
    if (this.carry !== '') this.line(this.carry);
    this.carry = '';
    if (this.first) this.reject(this.first.no, this.first.text, 'element line 1 is not followed by element line 2');
    else if (this.title) this.reject(this.title.no, null, `title line '${this.title.text}' is not followed by an element set`);
    this.first = this.title = null;
    return { batch: this.out.finish(), rejected: this.rejected, errors: this.errors };
  }

  private line(raw: string): void {
    const no = ++this.lineNo;
    const text = raw.trimEnd();
    if (text.trim() === '') return;
    // Title lines are at most 24 characters by the format; element lines are 69. A long line starting
    // with '1 ' or '2 ' is an element line even when it is malformed, so its error names the real problem.
    const kind = text.length > 24 && (text.startsWith('1 ') || text.startsWith('2 ')) ? text[0] : 'title';
    if (kind === '1') {
      if (this.first) this.reject(this.first.no, this.first.text, 'element line 1 is not followed by element line 2');
      this.first = { no, text };
    } else if (kind === '2') {
      if (!this.first) {
        this.reject(no, text, 'element line 2 without a preceding element line 1');
        this.title = null;
        return;
      }
      this.set(this.title, this.first, { no, text });
      this.title = this.first = null;
    } else {
      if (this.first) {
        this.reject(this.first.no, this.first.text, 'element line 1 is not followed by element line 2');
        this.first = null;
      } else if (this.title) this.reject(this.title.no, null, `title line '${this.title.text}' is not followed by an element set`);
      this.title = { no, text };
    }
  }

  /** Validates one set and appends it as a row, or reports the line at fault. */
  private set(title: Line | null, l1: Line, l2: Line): void {
    let at = l1;
    try {
      checkElementLine(l1.text, 1);
      at = l2;
      checkElementLine(l2.text, 2);
      const sat = field(l1.text, 3, 7);
      if (field(l2.text, 3, 7) !== sat) throw new TleFieldError(`satellite number '${field(l2.text, 3, 7)}' differs from '${sat}' on element line 1`);
      at = l1;
      // Every field is read before any is stored, so a bad field leaves no partial row behind.
      const time = epochField(l1.text);
      const dot = decimalField(l1.text, 34, 43, 'the first derivative of mean motion');
      const ddot = exponentField(l1.text, 45, 52, 'the second derivative of mean motion');
      const bstar = exponentField(l1.text, 54, 61, 'the B* drag term');
      const elset = integerField(l1.text, 65, 68, 'the element set number');
      at = l2;
      const incl = decimalField(l2.text, 9, 16, 'the inclination');
      const raan = decimalField(l2.text, 18, 25, 'the right ascension of the ascending node');
      const ecc = impliedDecimalField(l2.text, 27, 33, 'the eccentricity');
      const argp = decimalField(l2.text, 35, 42, 'the argument of perigee');
      const anomaly = decimalField(l2.text, 44, 51, 'the mean anomaly');
      const motion = decimalField(l2.text, 53, 63, 'the mean motion');
      const revs = integerField(l2.text, 64, 68, 'the revolution number');
      const row = this.out.len;
      const c = this.cols;
      c.satellite_number.setString(row, sat);
      c.name.setString(row, title ? title.text.replace(/^0 /, '').trim() : null);
      c.classification.setString(row, field(l1.text, 8, 8) || null);
      c.international_designator.setString(row, field(l1.text, 10, 17) || null);
      c.mean_motion.setFloat(row, motion);
      c.mean_motion_dot.setFloat(row, dot);
      c.mean_motion_ddot.setFloat(row, ddot);
      c.bstar.setFloat(row, bstar);
      c.inclination.setFloat(row, incl);
      c.raan.setFloat(row, raan);
      c.eccentricity.setFloat(row, ecc);
      c.arg_of_perigee.setFloat(row, argp);
      c.mean_anomaly.setFloat(row, anomaly);
      c.revolution_number.setInt(row, revs);
      c.element_set_number.setInt(row, elset);
      this.out.commitRow(time);
    } catch (err) {
      if (!(err instanceof TleFieldError)) throw err;
      this.reject(at.no, at.text, err.message);
    }
  }

  private reject(line: number, text: string | null, message: string): void {
    this.rejected++;
    const satellite = text && text.length >= 7 ? field(text, 3, 7) || null : null;
    if (this.errors.length < MAX_TLE_ERRORS) this.errors.push({ line, satellite, message });
  }
}

/** Parses a whole TLE text (see TleParser). */
export function parseTle(text: string, measurement: string): TleResult {
  const p = new TleParser(measurement);
  p.push(text);
  return p.finish();
}

/**
 * Per-measurement parse state: the BatchBuilder plus a positional key cache. Lines of one
 * measurement nearly always repeat the same keys in the same order, so the i-th key of a line is
 * first compared byte-for-byte with the i-th key of the previous line; only a miss decodes a name.
 */
import { columnNameProblem } from '../../lib/names.ts';
import { BatchBuilder, type ColumnBuilder, KIND_STRING, KIND_WORDS } from '../column-builder.ts';
import { decodeName, tagCodes } from './tokens.ts';

// Below this many expected rows a tag column stays a plain array: the codes' lookup table (32 KB) would cost more.
const MIN_CODED_ROWS = 256;

/** One measurement's builder and the caches that map key bytes to its columns. */
export class MeasurementState {
  readonly batch: BatchBuilder;
  /** Why the last `tagColumn` / `fieldColumn` call returned null. */
  problem = '';
  private tagKeys: Uint8Array[] = [];
  private tagCols: ColumnBuilder[] = [];
  private fieldKeys: Uint8Array[] = [];
  private fieldCols: ColumnBuilder[] = [];

  /** Tag columns are kept as dictionary codes (only when many rows are expected). */
  private readonly codedTags: boolean;

  /**
   * `expectedRows`: the rows to size the columns for (0: a default, grown as needed). Only a measurement
   * sized this way codes its tags, so a body of many small measurements does not pay a table per tag.
   */
  constructor(name: string, expectedRows = 0) {
    this.batch = new BatchBuilder(name, expectedRows > 0 ? expectedRows : undefined);
    this.codedTags = expectedRows >= MIN_CODED_ROWS;
  }

  /** Column of the `i`-th tag of the line, key in bytes [start, end); null (see `problem`) if the key is unusable. */
  tagColumn(i: number, buf: Buffer, start: number, end: number, escaped: boolean): ColumnBuilder | null {
    if (i < this.tagKeys.length && sameBytes(this.tagKeys[i], buf, start, end)) return this.tagCols[i];
    const name = decodeName(buf, start, end, escaped);
    let col = this.batch.columns.get(name);
    if (col === undefined) {
      const problem = name === 'time' ? "the name 'time' is reserved for the timestamp" : columnNameProblem(name);
      if (problem !== null) return this.refuse(`cannot use tag key '${name}': ${problem}`);
      col = this.batch.addColumn(name, KIND_STRING, true);
      // Tag values repeat: codes into a dictionary, not a string per row (the flush path and the WAL
      // then copy codes instead of re-encoding strings).
      if (this.codedTags) col.codes = tagCodes(col.cap);
    } else if (!col.tag) {
      return this.refuse(`cannot use tag key '${name}': it is already a field of this measurement`);
    }
    remember(this.tagKeys, this.tagCols, i, buf.subarray(start, end), col);
    return col;
  }

  /** Column of the `i`-th field, of column kind `kind`; null (see `problem`) on a reserved name or a type conflict. */
  fieldColumn(i: number, buf: Buffer, start: number, end: number, escaped: boolean, kind: number): ColumnBuilder | null {
    if (i < this.fieldKeys.length && sameBytes(this.fieldKeys[i], buf, start, end)) {
      const cached = this.fieldCols[i];
      return cached.kind === kind ? cached : this.conflict(cached, kind);
    }
    const name = decodeName(buf, start, end, escaped);
    let col = this.batch.columns.get(name);
    if (col === undefined) {
      const problem = name === 'time' ? "the name 'time' is reserved for the timestamp" : columnNameProblem(name);
      if (problem !== null) return this.refuse(`cannot use field key '${name}': ${problem}`);
      col = this.batch.addColumn(name, kind, false);
    } else if (col.tag) {
      return this.refuse(`cannot use field key '${name}': it collides with a tag key`);
    } else if (col.kind !== kind) {
      return this.conflict(col, kind);
    }
    remember(this.fieldKeys, this.fieldCols, i, buf.subarray(start, end), col);
    return col;
  }

  /** Undoes the half-parsed row after a line error; the key caches may point at removed columns, so they reset. */
  rollback(): void {
    this.batch.rollbackRow();
    this.tagKeys.length = 0;
    this.tagCols.length = 0;
    this.fieldKeys.length = 0;
    this.fieldCols.length = 0;
  }

  private conflict(col: ColumnBuilder, kind: number): null {
    return this.refuse(
      `field type conflict: field '${col.name}' is ${KIND_WORDS[kind]} here but ${KIND_WORDS[col.kind]} in earlier lines`,
    );
  }

  private refuse(problem: string): null {
    this.problem = problem;
    return null;
  }
}

function remember(keys: Uint8Array[], cols: ColumnBuilder[], i: number, key: Uint8Array, col: ColumnBuilder): void {
  // Caches only grow by one position at a time so the arrays stay dense (holes slow them down).
  if (i > keys.length) return;
  keys[i] = key;
  cols[i] = col;
}

function sameBytes(key: Uint8Array, buf: Uint8Array, start: number, end: number): boolean {
  const len = key.length;
  if (len !== end - start) return false;
  for (let j = 0; j < len; j++) if (key[j] !== buf[start + j]) return false;
  return true;
}

/**
 * Collects decoded points into one ColumnBatch per measurement. MQTT messages carry a few to a few
 * hundred points, so values are gathered in plain arrays and typed once at the end.
 */
import type { Column, ColumnBatch } from '../../ingest/index.ts';

/** A point's value as decoded: numbers are DOUBLE, booleans BOOLEAN, strings VARCHAR. */
export type FieldValue = number | boolean | string;

const KIND_FLOAT = 0;
const KIND_BOOL = 1;
const KIND_STRING = 2;
const KIND_WORDS = ['a number', 'a boolean', 'a string'];

interface DraftColumn {
  kind: number;
  tag: boolean;
  values: (FieldValue | undefined)[];
}

interface Draft {
  time: number[];
  columns: Map<string, DraftColumn>;
}

const kindOf = (v: FieldValue) => (typeof v === 'number' ? KIND_FLOAT : typeof v === 'boolean' ? KIND_BOOL : KIND_STRING);

/** Builds batches point by point; throws on a column whose type or role changes between points. */
export class BatchAssembler {
  private readonly drafts = new Map<string, Draft>();
  private draft: Draft | null = null;
  private row = 0;

  /** Starts a point of `measurement` at `timeMicros`; its tags and fields follow through `tag` and `field`. */
  begin(measurement: string, timeMicros: number): void {
    let d = this.drafts.get(measurement);
    if (!d) this.drafts.set(measurement, (d = { time: [], columns: new Map() }));
    this.draft = d;
    this.row = d.time.length;
    d.time.push(timeMicros);
  }

  /** Sets a tag of the current point. */
  tag(name: string, value: string): void {
    this.set(name, value, true);
  }

  /** Sets a field of the current point. */
  field(name: string, value: FieldValue): void {
    this.set(name, value, false);
  }

  /** Number of points added so far. */
  get points(): number {
    let n = 0;
    for (const d of this.drafts.values()) n += d.time.length;
    return n;
  }

  private set(name: string, value: FieldValue, tag: boolean): void {
    const d = this.draft!;
    const kind = kindOf(value);
    let col = d.columns.get(name);
    if (!col) d.columns.set(name, (col = { kind, tag, values: [] }));
    else if (col.tag !== tag) throw new Error(`column '${name}' is a tag in one point and a field in another`);
    else if (col.kind !== kind) throw new Error(`column '${name}' holds ${KIND_WORDS[col.kind]} in one point and ${KIND_WORDS[kind]} in another`);
    col.values[this.row] = value;
  }

  /** The finished batches, one per measurement, in first-seen order. */
  finish(): ColumnBatch[] {
    const out: ColumnBatch[] = [];
    for (const [measurement, d] of this.drafts) {
      const length = d.time.length;
      const columns = new Map<string, Column>();
      for (const [name, col] of d.columns) columns.set(name, toColumn(col, length));
      out.push({ measurement, length, time: Float64Array.from(d.time), columns });
    }
    return out;
  }
}

function toColumn(col: DraftColumn, length: number): Column {
  const { values } = col;
  if (col.kind === KIND_STRING) {
    const strs = new Array<string | null>(length);
    for (let i = 0; i < length; i++) strs[i] = (values[i] as string | undefined) ?? null;
    return { type: 'string', values: strs, valid: null, tag: col.tag };
  }
  let valid: Uint8Array | null = null;
  for (let i = 0; i < length; i++) {
    if (values[i] !== undefined) continue;
    valid ??= new Uint8Array(length).fill(1);
    valid[i] = 0;
  }
  if (col.kind === KIND_FLOAT) {
    const f = new Float64Array(length);
    for (let i = 0; i < length; i++) f[i] = (values[i] as number | undefined) ?? 0;
    return { type: 'float64', values: f, valid, tag: false };
  }
  const b = new Uint8Array(length);
  for (let i = 0; i < length; i++) b[i] = values[i] === true ? 1 : 0;
  return { type: 'bool', values: b, valid, tag: false };
}

/**
 * Joins runs of small batches of one measurement with the same columns into one batch, before they
 * cross to a flush worker. A remote-write request yields a batch of a few hundred rows per metric, so
 * a flush of one measurement carried thousands of batches: the structured clone of their views and
 * per-batch dictionaries cost more of the event loop than parsing them (measured with
 * `bun run bench:prom`). Copying the rows into one set of arrays is a few memcpys. Row order is kept
 * (last-write-wins relies on it); batches with different column sets or types are left apart.
 */
import type { Column, ColumnBatch } from './column-batch.ts';
import { dictionaryColumn } from './column-batch.ts';
import { sharedFloat64, sharedBigInt64, sharedUint8, sharedUint32 } from './shared-arrays.ts';

/** Batches at least this long go as they are: few of them, and a copy would cost more than it saves. */
const SMALL_ROWS = 4096;

/** Measurement, column names, types and tag flags: batches with equal signatures can be joined. */
function signature(b: ColumnBatch): string {
  let s = b.measurement;
  for (const [name, col] of b.columns) s += `\u0000${name}\u0001${col.type}${col.tag ? 't' : ''}`;
  return s;
}

/** `batches` with each run of two or more consecutive small, same-signature batches joined into one. */
export function coalesceSmallBatches(batches: readonly ColumnBatch[]): readonly ColumnBatch[] {
  if (batches.length < 2) return batches;
  const out: ColumnBatch[] = [];
  let run: ColumnBatch[] = [];
  let runSignature = '';
  const close = () => {
    if (run.length === 1) out.push(run[0]!);
    else if (run.length > 1) out.push(join(run));
    run = [];
  };
  for (const b of batches) {
    if (b.length >= SMALL_ROWS) {
      close();
      out.push(b);
      continue;
    }
    const sig = signature(b);
    if (run.length > 0 && sig !== runSignature) close();
    runSignature = sig;
    run.push(b);
  }
  close();
  return out;
}

/** The first `n` values of `a`: `a` itself when that is all of it (most batches), else a view. */
function head<T extends Float64Array | Uint32Array | Uint8Array>(a: T, n: number): T {
  return a.length === n ? a : (a.subarray(0, n) as T);
}

/** One batch holding the rows of `run` (same signature) in order. */
function join(run: readonly ColumnBatch[]): ColumnBatch {
  let length = 0;
  for (const b of run) length += b.length;
  const time = sharedFloat64(length);
  let at = 0;
  for (const b of run) {
    time.set(head(b.time, b.length), at);
    at += b.length;
  }
  const columns = new Map<string, Column>();
  for (const [name, first] of run[0]!.columns) columns.set(name, joinColumn(run, name, first, length));
  return { measurement: run[0]!.measurement, length, time, columns };
}

function joinColumn(run: readonly ColumnBatch[], name: string, first: Column, length: number): Column {
  const parts = run.map((b) => b.columns.get(name)!);
  if (first.type === 'string') return joinStrings(run, parts as (Column & { type: 'string' })[], first.tag, length);
  let valid: Uint8Array | null = null;
  if (parts.some((c) => c.valid !== null)) {
    valid = sharedUint8(length).fill(1);
    let at = 0;
    for (let i = 0; i < run.length; i++) {
      const v = parts[i]!.valid;
      if (v) valid.set(head(v, run[i]!.length), at);
      at += run[i]!.length;
    }
  }
  const values = first.type === 'int64' ? sharedBigInt64(length) : first.type === 'bool' ? sharedUint8(length) : sharedFloat64(length);
  let at = 0;
  for (let i = 0; i < run.length; i++) {
    const n = run[i]!.length;
    (values as Float64Array).set(head(parts[i]!.values as Float64Array, n), at);
    at += n;
  }
  return { type: first.type, values, valid, tag: false } as Column;
}

/** String columns as codes into one merged dictionary (each batch's codes renumbered through a small table). */
function joinStrings(run: readonly ColumnBatch[], parts: readonly (Column & { type: 'string' })[], tag: boolean, length: number): Column {
  const codes = sharedUint32(length);
  const dictionary: (string | null)[] = [null];
  const index = new Map<string, number>();
  const codeOf = (v: string | null | undefined) => {
    if (v === null || v === undefined) return 0;
    let code = index.get(v);
    if (code === undefined) index.set(v, (code = dictionary.push(v) - 1));
    return code;
  };
  // Batches of one parser often share a dictionary array (remote write reuses an equal one): renumber it once.
  // The first dictionary's codes usually stay as they are (renumbering is the identity): then a copy.
  const renumbered = new Map<(string | null)[], Uint32Array | null>();
  let at = 0;
  for (let i = 0; i < run.length; i++) {
    const n = run[i]!.length;
    const col = parts[i]!;
    if (col.dict) {
      const { codes: from, dictionary: dict } = col.dict;
      let renumber = renumbered.get(dict);
      if (renumber === undefined) {
        renumber = new Uint32Array(dict.length);
        let identity = true;
        for (let c = 0; c < dict.length; c++) identity = (renumber[c] = codeOf(dict[c])) === c && identity;
        if (identity) renumber = null;
        renumbered.set(dict, renumber);
      }
      if (renumber === null) codes.set(head(from, n), at);
      else for (let r = 0; r < n; r++) codes[at + r] = renumber[from[r]!]!;
    } else {
      const values = col.values;
      for (let r = 0; r < n; r++) codes[at + r] = codeOf(values[r]);
    }
    at += n;
  }
  return dictionaryColumn({ codes, dictionary }, tag);
}

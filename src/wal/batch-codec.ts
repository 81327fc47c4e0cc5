/**
 * Binary form of one write, `(database, ColumnBatch[])`, as stored in a WAL entry. Typed columns are
 * copied as raw bytes; a string column becomes a per-column dictionary (one UTF-8 blob plus UTF-16
 * lengths, decoded with a single TextDecoder call) and one small integer id per row, so the per-row
 * work on the hot path is a Map lookup that is skipped when a value repeats the previous row's.
 *
 * Layout (little-endian): u8 version | str database | u32 batches | per batch: str measurement,
 * u32 rows, u32 columns, f64[rows] time, per column: str name, u8 type, u8 flags (1 tag, 2 validity),
 * [u8[rows] validity], values. String values: u8 id width (1|2|4), u32 dictionary size, u32[size]
 * UTF-16 lengths, u32 blob bytes, blob, ids[rows] (0 = NULL, k = dictionary entry k-1).
 */
import type { Column, ColumnBatch, StringDictionary } from '../ingest/index.ts';
import { ByteReader, ByteWriter, utf8 } from './byte-io.ts';

const VERSION = 1;
const TYPE_CODES = { float64: 0, int64: 1, bool: 2, string: 3 } as const;
const FLAG_TAG = 1;
const FLAG_VALID = 2;

/** The decoded form of one WAL payload. */
export interface DecodedWrite {
  database: string;
  batches: ColumnBatch[];
}

interface StringPlan {
  ids: Uint8Array | Uint16Array | Uint32Array;
  lens: Uint32Array;
  blob: Uint8Array;
}
interface ColumnPlan {
  name: Uint8Array;
  col: Column;
  strings: StringPlan | null;
}
interface BatchPlan {
  measurement: Uint8Array;
  batch: ColumnBatch;
  columns: ColumnPlan[];
}

/**
 * Encodes one write. The first `reserve` bytes of the result are left zero for the caller's own
 * header, so the WAL frames an entry without copying the payload again.
 */
export function encodeBatches(database: string, batches: readonly ColumnBatch[], reserve = 0): Uint8Array {
  const db = utf8(database);
  let size = reserve + 1 + 4 + db.length + 4;
  const plans: BatchPlan[] = [];
  for (const batch of batches) {
    const n = batch.length;
    const measurement = utf8(batch.measurement);
    size += 4 + measurement.length + 8 + n * 8;
    const columns: ColumnPlan[] = [];
    for (const [name, col] of batch.columns) {
      const plan: ColumnPlan = { name: utf8(name), col, strings: null };
      size += 4 + plan.name.length + 2;
      if (col.type === 'string') {
        const s = (plan.strings = (col.dict && planCodedStrings(col.dict, n)) || planStrings(col.values, n));
        size += 1 + 4 + s.lens.byteLength + 4 + s.blob.length + s.ids.byteLength;
      } else {
        if (col.valid) size += n;
        size += col.type === 'bool' ? n : n * 8;
      }
      columns.push(plan);
    }
    plans.push({ measurement, batch, columns });
  }

  const w = new ByteWriter(size, reserve);
  w.u8(VERSION);
  w.str(db);
  w.u32(plans.length);
  for (const { measurement, batch, columns } of plans) {
    const n = batch.length;
    w.str(measurement);
    w.u32(n);
    w.u32(columns.length);
    w.raw(batch.time.subarray(0, n));
    for (const { name, col, strings } of columns) {
      w.str(name);
      w.u8(TYPE_CODES[col.type]);
      if (strings) {
        w.u8(col.tag ? FLAG_TAG : 0);
        w.u8(strings.ids.BYTES_PER_ELEMENT);
        w.u32(strings.lens.length);
        w.raw(strings.lens);
        w.u32(strings.blob.length);
        w.raw(strings.blob);
        w.raw(strings.ids);
        continue;
      }
      if (col.type === 'string') throw new Error('unreachable: string column without a plan');
      w.u8(col.valid ? FLAG_VALID : 0);
      if (col.valid) w.raw(col.valid.subarray(0, n));
      w.raw(col.values.subarray(0, n));
    }
  }
  if (w.pos !== size) throw new Error(`cannot encode WAL payload: wrote ${w.pos} bytes, planned ${size}`);
  return w.bytes;
}

/**
 * The same plan from a parser-made dictionary (column-batch.ts): its codes already follow this
 * format's id rule (0 = NULL, k = entry k-1), so no string is looked at per row. Null when the
 * dictionary holds a NULL other than entry 0, which the format cannot express.
 */
function planCodedStrings(dict: StringDictionary, n: number): StringPlan | null {
  const unique = dict.dictionary.slice(1);
  if (unique.some((v) => typeof v !== 'string')) return null;
  const lens = new Uint32Array(unique.length);
  for (let i = 0; i < unique.length; i++) lens[i] = unique[i]!.length;
  const codes = dict.codes.subarray(0, n);
  const ids = unique.length < 0xff ? Uint8Array.from(codes) : unique.length < 0xffff ? Uint16Array.from(codes) : codes;
  return { ids, lens, blob: utf8(unique.join('')) };
}

/** Builds the dictionary of a string column: ids per row, UTF-16 lengths and one UTF-8 blob. */
function planStrings(values: readonly (string | null)[], n: number): StringPlan {
  const dict = new Map<string, number>();
  const unique: string[] = [];
  const ids = new Uint32Array(n);
  let prev: string | null = null;
  let prevId = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === null || v === undefined) continue; // id 0 = NULL
    if (v === prev) {
      ids[i] = prevId;
      continue;
    }
    let id = dict.get(v);
    if (id === undefined) {
      unique.push(v);
      id = unique.length;
      dict.set(v, id);
    }
    ids[i] = prevId = id;
    prev = v;
  }
  const lens = new Uint32Array(unique.length);
  for (let i = 0; i < unique.length; i++) lens[i] = unique[i]!.length;
  // Ids take the narrowest width that holds the dictionary size (plus the NULL id 0).
  const narrow = unique.length < 0xff ? new Uint8Array(n) : unique.length < 0xffff ? new Uint16Array(n) : null;
  if (narrow) narrow.set(ids);
  return { ids: narrow ?? ids, lens, blob: utf8(unique.join('')) };
}

/** Decodes a payload written by encodeBatches; throws "cannot decode WAL payload: ..." on any inconsistency. */
export function decodeBatches(bytes: Uint8Array): DecodedWrite {
  try {
    return decode(new ByteReader(bytes));
  } catch (err) {
    throw new Error(`cannot decode WAL payload: ${(err as Error).message}`, { cause: err });
  }
}

function decode(r: ByteReader): DecodedWrite {
  const version = r.u8();
  if (version !== VERSION) throw new Error(`unknown format version ${version}`);
  const database = r.str();
  const count = r.u32();
  const batches: ColumnBatch[] = [];
  for (let b = 0; b < count; b++) {
    const measurement = r.str();
    const n = r.u32();
    const ncols = r.u32();
    const time = new Float64Array(r.copy(n * 8));
    const columns = new Map<string, Column>();
    for (let c = 0; c < ncols; c++) {
      const name = r.str();
      columns.set(name, readColumn(r, n));
    }
    batches.push({ measurement, length: n, time, columns });
  }
  if (r.remaining !== 0) throw new Error(`${r.remaining} unexpected bytes after the last batch`);
  return { database, batches };
}

function readColumn(r: ByteReader, n: number): Column {
  const type = r.u8();
  const flags = r.u8();
  if (type === TYPE_CODES.string) return { type: 'string', values: readStrings(r, n), valid: null, tag: (flags & FLAG_TAG) !== 0 };
  const valid = flags & FLAG_VALID ? new Uint8Array(r.copy(n)) : null;
  switch (type) {
    case TYPE_CODES.float64:
      return { type: 'float64', values: new Float64Array(r.copy(n * 8)), valid, tag: false };
    case TYPE_CODES.int64:
      return { type: 'int64', values: new BigInt64Array(r.copy(n * 8)), valid, tag: false };
    case TYPE_CODES.bool:
      return { type: 'bool', values: new Uint8Array(r.copy(n)), valid, tag: false };
    default:
      throw new Error(`unknown column type code ${type}`);
  }
}

function readStrings(r: ByteReader, n: number): (string | null)[] {
  const width = r.u8();
  if (width !== 1 && width !== 2 && width !== 4) throw new Error(`bad string id width ${width}`);
  const size = r.u32();
  const lens = new Uint32Array(r.copy(size * 4));
  const text = ByteReader.text(r.sub(r.u32()));
  // Entry k-1 of the dictionary is id k; slot 0 is NULL.
  const dict: (string | null)[] = new Array(size + 1);
  dict[0] = null;
  let at = 0;
  for (let i = 0; i < size; i++) {
    dict[i + 1] = text.slice(at, at + lens[i]!);
    at += lens[i]!;
  }
  if (at !== text.length) throw new Error('string dictionary lengths do not match its text');
  const buf = r.copy(n * width);
  const ids = width === 1 ? new Uint8Array(buf) : width === 2 ? new Uint16Array(buf) : new Uint32Array(buf);
  const values: (string | null)[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const id = ids[i]!;
    if (id > size) throw new Error(`string id ${id} outside a dictionary of ${size}`);
    values[i] = dict[id] ?? null;
  }
  return values;
}

/**
 * The flush path's fast Parquet writer: typed columns straight to time-sorted hourly files, with no
 * per-value work beyond what the encodings need (doubles and int64s are their own little-endian
 * bytes). DuckDB's COPY spends ~20 ns per double here (statistics, dictionary attempts, paging), which
 * made it the largest cost of ingestion; this writer covers the shapes flushes nearly always have
 * (batches each in time order, however interleaved, over any hours) and writeHourFiles sends
 * everything else (rows far out of order, high-cardinality strings, gzip/zstd) to DuckDB. Files read
 * back exactly like DuckDB's own: the same physical and converted types, OPTIONAL columns,
 * statistics, TypeDefinedOrder, and the `tags` key/value entry.
 *
 * Thrift structures are serialized by hyparquet-writer; the page bodies are encoded here (snappy by
 * snappy.ts):
 * time as DELTA_BINARY_PACKED, string columns as RLE_DICTIONARY, everything else PLAIN. A column
 * chunk is snappy-compressed when a sample of it shrinks, else stored uncompressed (random-looking
 * measurements do not shrink, and compressing them only costs CPU). Working memory (gathered columns,
 * permutations, the file's bytes) is reused from flush to flush (scratch.ts); each file is one write.
 */
import { writeFile as writeFileBytes } from 'node:fs/promises';
import { ByteWriter } from 'hyparquet-writer';
import { Scratch, type TypedCtor, withScratch } from './scratch.ts';
import { snappyCompress, snappyCompressTransient } from './snappy.ts';
import { serializeTCompactProtocol } from 'hyparquet-writer/src/thrift.js';
import type { ColumnBatch } from '../ingest/index.ts';
import type { Plan } from './chunk-fill.ts';

/** DuckDB's row group size, so files split into row groups the same way. */
const ROW_GROUP_ROWS = 122_880;
/** Sample compressed to decide a column chunk's codec, and the ratio below which snappy is kept. */
const SAMPLE_BYTES = 16_384;
const KEEP_RATIO = 0.85;

// Parquet enum values (parquet.thrift).
const T_BOOLEAN = 0;
const T_INT64 = 2;
const T_DOUBLE = 5;
const T_BYTE_ARRAY = 6;
const OPTIONAL = 1;
const REQUIRED = 0;
const CT_UTF8 = 0;
const CT_TIMESTAMP_MICROS = 10;
const CT_INT_64 = 18;
const E_PLAIN = 0;
const E_RLE = 3;
const E_DELTA_BINARY_PACKED = 5;
const E_RLE_DICTIONARY = 8;
const C_UNCOMPRESSED = 0;
const C_SNAPPY = 1;
const P_DATA_PAGE = 0;
const P_DICTIONARY_PAGE = 2;

const utf8 = new TextEncoder();
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The plans this writer handles: numbers, booleans and dictionary-coded strings. */
export function directWritable(plans: readonly Plan[]): boolean {
  return LITTLE_ENDIAN && plans.every((p) => p.type !== 'string' || p.encoded !== null);
}

/** One column gathered over all batches: values (non-null rows only for the page) and validity. */
interface Gathered {
  plan: Plan;
  /** Every row's value slot, contiguous (float64/int64/bool: typed; strings: dictionary ids). */
  values: Float64Array | BigInt64Array | Uint8Array | Uint32Array;
  /** 1 = present, per row; null when every row is present. */
  valid: Uint8Array | null;
  /** String columns: the dictionary as UTF-8, and as a PLAIN dictionary page (the same for every row group and file). */
  dict: { bytes: Uint8Array[]; page: Uint8Array } | null;
  /**
   * A float column already in order with no NULLs: the batches' own arrays, one per batch, instead of
   * `values` (empty then). Pages are written from them directly, which saves copying every value once
   * more (copies were ~18% of a flush worker's time on `bench:ingest`; this saved 2.5-7% of a flush).
   */
  pieces?: Float64Array[];
}

/** Above this many sorted runs (batches arriving out of time order) the rows go to DuckDB's sort instead. */
const MAX_RUNS = 64;

/**
 * Writes `total` rows of `batches` ordered by time (stable: equal times keep arrival order) as one
 * Parquet file per entry of `files`, which lists the UTC hours in ascending order with their row
 * counts: in time order each hour is a contiguous range of rows. `tags` goes into the key/value
 * metadata. Returns false, having written nothing, when the rows are too far out of order for a
 * merge of sorted runs.
 */
export async function writeDirect(
  batches: readonly ColumnBatch[],
  plans: readonly Plan[],
  total: number,
  files: readonly { path: string; rows: number }[],
  compression: 'snappy' | 'none',
  tags: readonly string[],
): Promise<boolean> {
  return withScratch(async (s) => {
    const arrival = concatTime(batches, total, s);
    const order = timeOrder(arrival, s);
    if (order === false) return false;
    const time = order ? permute(arrival, order, s, 'time') : arrival;
    const columns = plans.map((p, i) => gather(batches, p, total, order, s, i));
    let first = 0;
    for (const f of files) {
      await writeFile(f.path, plans, time, columns, first, f.rows, compression, tags, s);
      first += f.rows;
    }
    return true;
  });
}

/** Writes rows [first, first + rows) of the ordered columns to one file. */
async function writeFile(
  path: string,
  plans: readonly Plan[],
  time: Float64Array,
  columns: readonly Gathered[],
  first: number,
  rows: number,
  compression: 'snappy' | 'none',
  tags: readonly string[],
  s: Scratch,
): Promise<void> {
  // Sized for every column PLAIN and uncompressed, so it rarely grows.
  const out = new Output(s, 4096 + rows * (8 * (plans.length + 1) + 2));
  out.push(utf8.encode('PAR1'));
  const rowGroups: object[] = [];
  for (let offset = 0; offset < rows; offset += ROW_GROUP_ROWS) {
    const start = first + offset;
    const n = Math.min(ROW_GROUP_ROWS, rows - offset);
    const groupStart = out.offset;
    const chunks = [timeChunk(out, time.subarray(start, start + n), compression, s)];
    for (const c of columns) chunks.push(columnChunk(out, c, start, n, compression, s));
    rowGroups.push({
      field_1: chunks,
      field_2: BigInt(chunks.reduce((s, c) => s + Number(c.field_3.field_6), 0)),
      field_3: BigInt(n),
      field_5: BigInt(groupStart),
      field_6: BigInt(out.offset - groupStart),
    });
  }
  const schema = [
    { field_3: REQUIRED, field_4: 'duckdb_schema', field_5: plans.length + 1 },
    { field_1: T_INT64, field_3: OPTIONAL, field_4: 'time', field_6: CT_TIMESTAMP_MICROS, field_10: { field_8: { field_1: false, field_2: { field_2: {} } } } },
    ...plans.map((p) => schemaElement(p)),
  ];
  const footer = new ByteWriter(4096);
  serializeTCompactProtocol(footer, {
    field_1: 1,
    field_2: schema,
    field_3: BigInt(rows),
    field_4: rowGroups,
    field_5: [{ field_1: 'tags', field_2: JSON.stringify(tags) }],
    field_6: 'svc',
    field_7: schema.slice(1).map(() => ({ field_1: {} })),
  });
  const footerBytes = footer.getBytes();
  out.push(footerBytes);
  const tail = new Uint8Array(8);
  new DataView(tail.buffer).setUint32(0, footerBytes.length, true);
  tail.set(utf8.encode('PAR1'), 4);
  out.push(tail);
  // One contiguous buffer, one write: a Blob of the parts cost ~30x the CPU of this (measured, 4 MB files).
  await writeFileBytes(path, out.bytes());
}

/**
 * The rows in time order as a permutation of row numbers: null when they already are, false when
 * they form more than MAX_RUNS sorted runs. Batches usually arrive sorted but interleaved (several
 * clients, or a client resending), so the runs are merged, ties going to the earlier run.
 */
function timeOrder(time: Float64Array, s: Scratch): Uint32Array | null | false {
  const total = time.length;
  const starts: number[] = [0];
  for (let row = 1; row < total; row++) {
    if (time[row]! < time[row - 1]!) {
      if (starts.length === MAX_RUNS) return false;
      starts.push(row);
    }
  }
  if (starts.length === 1) return null;
  const k = starts.length;
  const pos = Int32Array.from(starts);
  const end = Int32Array.from(starts.slice(1).concat(total));
  // A binary heap of run numbers keyed by (time at the run's cursor, run number).
  const heap = Int32Array.from({ length: k }, (_, r) => r);
  let size = k;
  const less = (a: number, b: number) => {
    const ta = time[pos[a]!]!;
    const tb = time[pos[b]!]!;
    return ta < tb || (ta === tb && a < b);
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) return;
      const c = l + 1 < size && less(heap[l + 1]!, heap[l]!) ? l + 1 : l;
      if (!less(heap[c]!, heap[i]!)) return;
      const tmp = heap[i]!;
      heap[i] = heap[c]!;
      heap[c] = tmp;
      i = c;
    }
  };
  for (let i = (size >> 1) - 1; i >= 0; i--) down(i);
  const perm = s.take('order', Uint32Array, total);
  for (let o = 0; o < total; ) {
    const r = heap[0]!;
    // Rows of run r go out for as long as they sort before the best other run's next row: interleaved
    // batches usually cover disjoint time ranges, so this is a plain copy loop most of the time.
    let limT = Infinity;
    let limR = k;
    if (size > 1) {
      limR = size > 2 && less(heap[2]!, heap[1]!) ? heap[2]! : heap[1]!;
      limT = time[pos[limR]!]!;
    }
    let p = pos[r]!;
    const e = end[r]!;
    do perm[o++] = p++;
    while (p < e && (time[p]! < limT || (time[p] === limT && r < limR)));
    pos[r] = p;
    if (p === e) heap[0] = heap[--size]!;
    down(0);
  }
  return perm;
}

function schemaElement(p: Plan): object {
  if (p.type === 'float64') return { field_1: T_DOUBLE, field_3: OPTIONAL, field_4: p.name };
  if (p.type === 'int64') return { field_1: T_INT64, field_3: OPTIONAL, field_4: p.name, field_6: CT_INT_64 };
  if (p.type === 'bool') return { field_1: T_BOOLEAN, field_3: OPTIONAL, field_4: p.name };
  return { field_1: T_BYTE_ARRAY, field_3: OPTIONAL, field_4: p.name, field_6: CT_UTF8 };
}

/** The file's bytes so far, in one buffer (scratch memory while it fits); `offset` is the file offset of the next byte. */
class Output {
  private buf: Uint8Array;
  offset = 0;
  constructor(s: Scratch, estimate: number) {
    this.buf = s.take('file', Uint8Array, estimate);
  }
  push(b: Uint8Array): void {
    if (this.offset + b.length > this.buf.length) {
      const next = new Uint8Array(Math.max(this.buf.length * 2, this.offset + b.length));
      next.set(this.buf.subarray(0, this.offset));
      this.buf = next;
    }
    this.buf.set(b, this.offset);
    this.offset += b.length;
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.offset);
  }
}

/** Epoch µs of all rows (exact integers in doubles), in arrival order. */
function concatTime(batches: readonly ColumnBatch[], total: number, s: Scratch): Float64Array {
  const out = s.take('arrival', Float64Array, total);
  let row = 0;
  for (const b of batches) (out.set(b.time.subarray(0, b.length), row), (row += b.length));
  return out;
}

/** Consecutive stretches of a permutation (`from[s]` copied to `at[s]`, `len[s]` rows), or null when there are too many to pay off. */
interface Stretches {
  from: Uint32Array;
  at: Uint32Array;
  len: Uint32Array;
}

const stretchCache = new WeakMap<Uint32Array, Stretches | null>();

/** The permutation as stretches when it has at most one per 32 rows (then copies beat a gather per value). */
function stretchesOf(order: Uint32Array): Stretches | null {
  const cached = stretchCache.get(order);
  if (cached !== undefined) return cached;
  let count = order.length > 0 ? 1 : 0;
  for (let i = 1; i < order.length; i++) if (order[i] !== order[i - 1]! + 1) count++;
  let out: Stretches | null = null;
  if (count * 32 <= order.length) {
    out = { from: new Uint32Array(count), at: new Uint32Array(count), len: new Uint32Array(count) };
    let s = -1;
    for (let i = 0; i < order.length; i++) {
      if (i === 0 || order[i] !== order[i - 1]! + 1) {
        s++;
        out.from[s] = order[i]!;
        out.at[s] = i;
      }
      out.len[s]!++;
    }
  }
  stretchCache.set(order, out);
  return out;
}

type Values = Float64Array | BigInt64Array | Uint8Array | Uint32Array;

/** `values` rearranged (into scratch slot `slot`) so that row i holds values[order[i]]. */
function permute<T extends Values>(values: T, order: Uint32Array, s: Scratch, slot: string): T {
  const out = s.take(slot, values.constructor as TypedCtor<T>, order.length);
  const stretches = stretchesOf(order);
  if (stretches) {
    const { from, at, len } = stretches;
    for (let k = 0; k < from.length; k++) (out as Float64Array).set((values as Float64Array).subarray(from[k]!, from[k]! + len[k]!), at[k]!);
    return out;
  }
  // One monomorphic loop per element width; int64s move as two 32-bit words (no BigInt per value).
  if (values instanceof Float64Array) permuteF64(values, order, out as Float64Array);
  else if (values instanceof Uint32Array) permuteU32(values, order, out as Uint32Array);
  else if (values instanceof Uint8Array) permuteU8(values, order, out as Uint8Array);
  else {
    const src = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
    const dst = new Int32Array(out.buffer, out.byteOffset, order.length * 2);
    for (let i = 0; i < order.length; i++) {
      const j = order[i]! * 2;
      dst[2 * i] = src[j]!;
      dst[2 * i + 1] = src[j + 1]!;
    }
  }
  return out;
}

function permuteF64(values: Float64Array, order: Uint32Array, out: Float64Array): void {
  for (let i = 0; i < order.length; i++) out[i] = values[order[i]!]!;
}

function permuteU32(values: Uint32Array, order: Uint32Array, out: Uint32Array): void {
  for (let i = 0; i < order.length; i++) out[i] = values[order[i]!]!;
}

function permuteU8(values: Uint8Array, order: Uint32Array, out: Uint8Array): void {
  for (let i = 0; i < order.length; i++) out[i] = values[order[i]!]!;
}

/** One plan's values over all batches, contiguous and in `order`; missing columns and type misfits are NULL. */
function gather(batches: readonly ColumnBatch[], p: Plan, total: number, order: Uint32Array | null, s: Scratch, i: number): Gathered {
  const pieces = order === null ? floatPieces(batches, p) : null;
  if (pieces !== null) return { plan: p, values: EMPTY_F64, valid: null, dict: null, pieces };
  const g = gatherInArrival(batches, p, total, s, i);
  if (!order) return g;
  return { ...g, values: permute(g.values, order, s, `values-sorted-${i}`), valid: g.valid && permute(g.valid, order, s, `valid-sorted-${i}`) };
}

const EMPTY_F64 = new Float64Array(0);

/** A float64 plan's arrays, one per batch, when every batch has it as float64 with every row present; else null. */
function floatPieces(batches: readonly ColumnBatch[], p: Plan): Float64Array[] | null {
  if (p.type !== 'float64' || p.encoded) return null;
  const out: Float64Array[] = [];
  for (const b of batches) {
    const col = b.columns.get(p.name);
    if (col?.type !== 'float64' || col.valid !== null) return null;
    out.push(col.values.subarray(0, b.length));
  }
  return out;
}

/** Rows [start, start + n) of a column held as consecutive pieces, as views of them. */
function piecesIn(pieces: readonly Float64Array[], start: number, n: number): Float64Array[] {
  const out: Float64Array[] = [];
  let at = 0;
  for (const piece of pieces) {
    const from = Math.max(start - at, 0);
    const to = Math.min(start + n - at, piece.length);
    if (from < to) out.push(piece.subarray(from, to));
    at += piece.length;
    if (at >= start + n) break;
  }
  return out;
}

/** Column `i`'s values over all batches, in scratch memory; every row's slot is written (0 for NULLs). */
function gatherInArrival(batches: readonly ColumnBatch[], p: Plan, total: number, s: Scratch, i: number): Gathered {
  if (p.encoded) {
    const bytes = p.encoded.dictionary.map((s) => utf8.encode(s));
    return { plan: p, values: p.encoded.ids, valid: p.encoded.valid, dict: { bytes, page: plainStrings(bytes) } };
  }
  const slot = `values-${i}`;
  const values = p.type === 'float64' ? s.take(slot, Float64Array, total) : p.type === 'int64' ? s.take(slot, BigInt64Array, total) : s.take(slot, Uint8Array, total);
  let valid: Uint8Array | null = null;
  const allValid = () => (valid ??= s.take(`valid-${i}`, Uint8Array, total).fill(1));
  const nullRows = (at: number, n: number) => {
    allValid().fill(0, at, at + n);
    if (values instanceof BigInt64Array) values.fill(0n, at, at + n);
    else values.fill(0, at, at + n);
  };
  let row = 0;
  for (const b of batches) {
    const col = b.columns.get(p.name);
    if (!col || col.type === 'string' || (p.type === 'bool') !== (col.type === 'bool') || (p.type === 'int64' && col.type !== 'int64')) nullRows(row, b.length);
    else {
      if (p.type === 'float64' && col.type === 'int64') {
        const f = values as Float64Array;
        for (let i = 0; i < b.length; i++) f[row + i] = Number(col.values[i]);
      } else (values as Float64Array).set(col.values as Float64Array, row);
      if (col.valid && col.valid.includes(0)) allValid().set(col.valid.subarray(0, b.length), row);
    }
    row += b.length;
  }
  return { plan: p, values, valid, dict: null };
}

/** Writes the time column chunk of one row group; returns its ColumnChunk. */
function timeChunk(out: Output, t: Float64Array, compression: 'snappy' | 'none', s: Scratch) {
  const stats = { min: int64Bytes(BigInt(t[0]!)), max: int64Bytes(BigInt(t[t.length - 1]!)), nulls: 0 };
  const body = [definitionLevels(null, t.length), deltaBinaryPacked(t, s)];
  return writeChunk(out, 'time', T_INT64, [E_DELTA_BINARY_PACKED, E_RLE], null, body, t.length, E_DELTA_BINARY_PACKED, compression, stats, s);
}

/** Writes rows [start, start+n) of a gathered column as one column chunk; returns its ColumnChunk. */
function columnChunk(out: Output, c: Gathered, start: number, n: number, compression: 'snappy' | 'none', s: Scratch) {
  const p = c.plan;
  const valid = c.valid?.subarray(start, start + n) ?? null;
  const present = valid === null ? n : count(valid);
  const levels = definitionLevels(valid, n);
  if (p.encoded) {
    const ids = compact(c.values.subarray(start, start + n) as Uint32Array, valid, present);
    const dict = p.encoded.dictionary;
    const used = new Uint8Array(dict.length);
    for (let i = 0; i < ids.length; i++) used[ids[i]!] = 1;
    const bytes = c.dict!.bytes;
    let min: Uint8Array | null = null;
    let max: Uint8Array | null = null;
    for (let k = 0; k < dict.length; k++) {
      if (!used[k]) continue;
      const b = bytes[k]!;
      if (min === null || Buffer.compare(b, min) < 0) min = b;
      if (max === null || Buffer.compare(b, max) > 0) max = b;
    }
    const dictPage = c.dict!.page;
    const width = Math.max(1, Math.ceil(Math.log2(dict.length)));
    const body = [levels, Uint8Array.of(width), bitPackedRun(ids, width, s)];
    return writeChunk(
      out,
      p.name,
      T_BYTE_ARRAY,
      [E_PLAIN, E_RLE, E_RLE_DICTIONARY],
      { page: dictPage, count: dict.length },
      body,
      n,
      E_RLE_DICTIONARY,
      compression,
      { min, max, nulls: n - present },
      s,
    );
  }
  if (p.type === 'bool') {
    const vals = compact(c.values.subarray(start, start + n) as Uint8Array, valid, present);
    let any0 = false;
    let any1 = false;
    for (let i = 0; i < vals.length; i++) (vals[i] ? (any1 = true) : (any0 = true));
    const stats = present === 0 ? { min: null, max: null, nulls: n } : { min: Uint8Array.of(any0 ? 0 : 1), max: Uint8Array.of(any1 ? 1 : 0), nulls: n - present };
    return writeChunk(out, p.name, T_BOOLEAN, [E_PLAIN, E_RLE], null, [levels, packBits(vals)], n, E_PLAIN, compression, stats, s);
  }
  if (p.type === 'int64') {
    const vals = compact(c.values.subarray(start, start + n) as BigInt64Array, valid, present);
    let min: bigint | null = null;
    let max: bigint | null = null;
    for (let i = 0; i < vals.length; i++) {
      const v = vals[i]!;
      if (min === null || v < min) min = v;
      if (max === null || v > max) max = v;
    }
    const stats = { min: min === null ? null : int64Bytes(min), max: max === null ? null : int64Bytes(max), nulls: n - present };
    return writeChunk(out, p.name, T_INT64, [E_PLAIN, E_RLE], null, [levels, bytesOf(vals)], n, E_PLAIN, compression, stats, s);
  }
  const parts = c.pieces ? piecesIn(c.pieces, start, n) : [compact(c.values.subarray(start, start + n) as Float64Array, valid, present)];
  let min = Infinity;
  let max = -Infinity;
  let nan = false;
  for (const vals of parts) {
    for (let i = 0; i < vals.length; i++) {
      const v = vals[i]!;
      if (v < min) min = v;
      if (v > max) max = v;
      if (v !== v) nan = true;
    }
  }
  // With NaNs present the bounds are left out: readers order NaN differently, and no bounds is always correct.
  const bounded = !nan && present > 0;
  const stats = { min: bounded ? float64Bytes(min) : null, max: bounded ? float64Bytes(max) : null, nulls: n - present };
  return writeChunk(out, p.name, T_DOUBLE, [E_PLAIN, E_RLE], null, [levels, ...parts.map(bytesOf)], n, E_PLAIN, compression, stats, s);
}

interface Stats {
  min: Uint8Array | null;
  max: Uint8Array | null;
  nulls: number;
}

/** Writes an optional dictionary page and one data page (v1); returns the ColumnChunk thrift object. */
function writeChunk(
  out: Output,
  name: string,
  type: number,
  encodings: number[],
  dict: { page: Uint8Array; count: number } | null,
  /** The page body in parts: definition levels first, then the encoded values (one part or more). */
  body: Uint8Array[],
  rows: number,
  encoding: number,
  compression: 'snappy' | 'none',
  stats: Stats,
  s: Scratch,
) {
  // The sample comes from the values: the longest part after the levels (a float column's parts are its batches).
  const sample = body.slice(1).reduce((a, b) => (b.length > a.length ? b : a));
  const codec = compression === 'snappy' && shrinks(sample) ? C_SNAPPY : C_UNCOMPRESSED;
  const pack = (b: Uint8Array) => (codec === C_SNAPPY ? snappyCompress(b) : b);
  const bodyBytes = body.reduce((n, b) => n + b.length, 0);
  const start = out.offset;
  let uncompressed = 0;
  let dictionaryOffset: bigint | undefined;
  if (dict) {
    dictionaryOffset = BigInt(out.offset);
    const packed = pack(dict.page);
    const header = pageHeader({ field_1: P_DICTIONARY_PAGE, field_2: dict.page.length, field_3: packed.length, field_7: { field_1: dict.count, field_2: E_PLAIN } });
    out.push(header);
    out.push(packed);
    uncompressed += header.length + dict.page.length;
  }
  const dataOffset = BigInt(out.offset);
  // The compressed page is transient memory: it is copied into `out` below, before the next compression.
  const packed = codec === C_SNAPPY ? [snappyCompressTransient(concat(body, s))] : body;
  const header = pageHeader({
    field_1: P_DATA_PAGE,
    field_2: bodyBytes,
    field_3: packed.reduce((n, b) => n + b.length, 0),
    field_5: { field_1: rows, field_2: encoding, field_3: E_RLE, field_4: E_RLE },
  });
  out.push(header);
  for (const part of packed) out.push(part);
  uncompressed += header.length + bodyBytes;
  const statistics = {
    field_1: stats.max ?? undefined,
    field_2: stats.min ?? undefined,
    field_3: BigInt(stats.nulls),
    field_5: stats.max ?? undefined,
    field_6: stats.min ?? undefined,
  };
  return {
    field_2: BigInt(start),
    field_3: {
      field_1: type,
      field_2: encodings,
      field_3: [name],
      field_4: codec,
      field_5: BigInt(rows),
      field_6: BigInt(uncompressed),
      field_7: BigInt(out.offset - start),
      field_9: dataOffset,
      field_11: dictionaryOffset,
      field_12: statistics,
    },
  };
}

function pageHeader(h: Record<`field_${number}`, unknown>): Uint8Array {
  const w = new ByteWriter(64);
  serializeTCompactProtocol(w, h);
  return w.getBytes().slice();
}

/** Whether snappy shrinks a sample of `body` enough to be worth running on all of it. */
function shrinks(body: Uint8Array): boolean {
  if (body.length < 64) return false;
  const sample = body.subarray(0, Math.min(body.length, SAMPLE_BYTES));
  return snappyCompressTransient(sample).length < sample.length * KEEP_RATIO;
}

/** Definition levels (bit width 1) with their 4-byte length prefix: one RLE run when every row is present. */
function definitionLevels(valid: Uint8Array | null, n: number): Uint8Array {
  const w = new Bytes(16 + (valid ? Math.ceil(n / 8) : 0));
  w.skip(4);
  if (valid === null || count(valid) === n) {
    w.varint(n * 2);
    w.u8(1);
  } else {
    const groups = Math.ceil(n / 8);
    w.varint(groups * 2 + 1);
    for (let g = 0; g < groups; g++) {
      let byte = 0;
      for (let k = 0; k < 8; k++) {
        const i = g * 8 + k;
        if (i < n && valid[i]) byte |= 1 << k;
      }
      w.u8(byte);
    }
  }
  const out = w.bytes();
  new DataView(out.buffer, out.byteOffset).setUint32(0, out.length - 4, true);
  return out;
}

/** One bit-packed run of `values` at `width` bits (RLE/bit-packing hybrid, no length prefix). */
function bitPackedRun(values: Uint32Array, width: number, s: Scratch): Uint8Array {
  const groups = Math.ceil(values.length / 8);
  const w = new Bytes(10 + groups * width, s, 'bit-packed');
  w.varint(groups * 2 + 1);
  let acc = 0;
  let bits = 0;
  const buf = w.buf;
  let pos = w.pos;
  const total = groups * 8;
  for (let i = 0; i < total; i++) {
    // width <= 12 (dictionaries hold at most 4096 entries), so acc stays far below 2^31.
    acc |= (i < values.length ? values[i]! : 0) << bits;
    bits += width;
    while (bits >= 8) {
      buf[pos++] = acc & 0xff;
      acc >>>= 8;
      bits -= 8;
    }
  }
  w.pos = pos;
  return w.bytes();
}

/** PLAIN booleans: bit-packed, LSB first. */
function packBits(vals: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(vals.length / 8));
  for (let i = 0; i < vals.length; i++) if (vals[i]) out[i >> 3]! |= 1 << (i & 7);
  return out;
}

/** PLAIN byte arrays: 4-byte length and bytes each. */
function plainStrings(bytes: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(bytes.reduce((n, b) => n + 4 + b.length, 0));
  const view = new DataView(out.buffer);
  let pos = 0;
  for (const b of bytes) {
    view.setUint32(pos, b.length, true);
    out.set(b, pos + 4);
    pos += 4 + b.length;
  }
  return out;
}

/**
 * DELTA_BINARY_PACKED int64s: blocks of 128 values in 4 miniblocks of 32. The rows are one sorted hour,
 * so every delta lies in [0, 3.6e9) and bit widths stay at or below 32.
 */
function deltaBinaryPacked(off: Float64Array, s: Scratch): Uint8Array {
  const n = off.length;
  const w = new Bytes(32 + n * 5, s, 'delta');
  w.varint(128);
  w.varint(4);
  w.varint(n);
  w.zigzag64(n > 0 ? BigInt(off[0]!) : 0n);
  if (n <= 1) return w.bytes();
  // Times are exact integers in doubles (below 2^53 µs), so their differences are exact too.
  const deltas = new Float64Array(128);
  for (let blockStart = 1; blockStart < n; blockStart += 128) {
    const count = Math.min(128, n - blockStart);
    let minDelta = Infinity;
    for (let k = 0; k < count; k++) {
      const d = off[blockStart + k]! - off[blockStart + k - 1]!;
      deltas[k] = d;
      if (d < minDelta) minDelta = d;
    }
    w.zigzag64(BigInt(minDelta));
    const widthsAt = w.pos;
    w.skip(4);
    for (let m = 0; m < 4; m++) {
      const from = m * 32;
      if (from >= count) {
        w.buf[widthsAt + m] = 0;
        continue;
      }
      let maxRel = 0;
      for (let k = from; k < from + 32 && k < count; k++) maxRel = Math.max(maxRel, deltas[k]! - minDelta);
      const width = maxRel === 0 ? 0 : Math.ceil(Math.log2(maxRel + 1));
      w.buf[widthsAt + m] = width;
      if (width === 0) continue;
      // A little-endian bit stream of 32 values; every value is below 2^32 (deltas within one hour).
      w.reserve(4 * width);
      const buf = w.buf;
      let pos = w.pos;
      let byte = 0;
      let bitPos = 0;
      for (let k = from; k < from + 32; k++) {
        let v = k < count ? deltas[k]! - minDelta : 0;
        let left = width;
        while (left > 0) {
          const take = Math.min(8 - bitPos, left);
          byte |= (v % (1 << take)) << bitPos;
          v = Math.floor(v / (1 << take));
          left -= take;
          bitPos += take;
          if (bitPos === 8) {
            buf[pos++] = byte;
            byte = 0;
            bitPos = 0;
          }
        }
      }
      w.pos = pos;
    }
  }
  return w.bytes();
}

/** A growable byte buffer for the encoders above. */
class Bytes {
  buf: Uint8Array;
  pos = 0;
  /** With a scratch slot, the buffer starts in reused memory (its stale bytes are overwritten before they are read). */
  constructor(size: number, s?: Scratch, slot?: string) {
    this.buf = s && slot ? s.take(slot, Uint8Array, size) : new Uint8Array(size);
  }
  /** Makes room for `n` more bytes (for callers that write `buf` directly). */
  reserve(n: number): void {
    this.ensure(n);
  }
  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }
  u8(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }
  skip(n: number): void {
    this.ensure(n);
    this.pos += n;
  }
  varint(v: number): void {
    this.ensure(10);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }
  zigzag64(v: bigint): void {
    let z = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
    this.ensure(10);
    while (z >= 0x80n) {
      this.buf[this.pos++] = Number(z & 0x7fn) | 0x80;
      z >>= 7n;
    }
    this.buf[this.pos++] = Number(z);
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

function count(valid: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < valid.length; i++) n += valid[i]! !== 0 ? 1 : 0;
  return n;
}

/** The present values only (pages hold no slots for NULLs). */
function compact<T extends Float64Array | BigInt64Array | Uint8Array | Uint32Array>(values: T, valid: Uint8Array | null, present: number): T {
  if (valid === null || present === values.length) return values;
  const Ctor = values.constructor as new (n: number) => T;
  const out = new Ctor(present);
  let k = 0;
  for (let i = 0; i < values.length; i++) if (valid[i]) (out as Float64Array)[k++] = (values as Float64Array)[i]!;
  return out;
}

function bytesOf(a: Float64Array | BigInt64Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

function concat(parts: Uint8Array[], s: Scratch): Uint8Array {
  const out = s.take('concat', Uint8Array, parts.reduce((n, p) => n + p.length, 0));
  let pos = 0;
  for (const p of parts) {
    out.set(p, pos);
    pos += p.length;
  }
  return out;
}

function int64Bytes(v: bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, v, true);
  return b;
}

function float64Bytes(v: number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, v, true);
  return b;
}

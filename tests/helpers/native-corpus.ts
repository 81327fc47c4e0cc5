/**
 * Fuzzed result chunks for the native encoders and their TypeScript twins (tests/native-twins.test.ts):
 * every column kind the C JSON writer takes, NULL runs whose slots hold garbage (as DuckDB leaves
 * them: a string header under a NULL has a random length and pointer), empty, inline (<= 12 bytes),
 * long and huge strings, non-ASCII and control characters, and timestamps and dates outside
 * 0000-9999 (rows the C side hands back). Seeded: a failure names its seed and repeats.
 *
 * A chunk is kept position-independent (long strings as offsets into its heap) so the same bytes can
 * be written to a corpus file for the sanitizer harness; `place` turns it into real addresses.
 */
import { ptr } from 'bun:ffi';
import type { ColumnKind, TimeUnit } from '../../src/query/encode/column-kind.ts';

/** The C writer's kind codes (src/native/json-rows.c). */
const CODE = { int8: 0, int16: 1, int32: 2, uint8: 3, uint16: 4, uint32: 5, int64: 6, uint64: 7, bool: 8, ts: 9, date: 10, varchar: 11, json: 12, null: 13 } as const;
const UNIT: Record<TimeUnit, number> = { s: 0, ms: 1, us: 2, ns: 3 };
const PER_SEC: Record<TimeUnit, bigint> = { s: 1n, ms: 1000n, us: 1_000_000n, ns: 1_000_000_000n };

export interface FuzzColumn {
  kind: ColumnKind;
  /** C kind code and parameter (time unit). */
  code: number;
  unit: number;
  width: number;
}

export interface FuzzChunk {
  rows: number;
  /** Per column: values (rows * width bytes; string headers hold heap offsets), validity (null: all valid). */
  data: Uint8Array[];
  validity: (Uint8Array | null)[];
  /** Long strings of every string column, referenced by offset from the headers of valid rows. */
  heap: Uint8Array;
}

export interface FuzzCase {
  seed: number;
  columns: FuzzColumn[];
  chunks: FuzzChunk[];
}

/** xorshift32: small, seeded, the same on every machine. */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  const next = () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
  return { u32: next, below: (n: number) => next() % n, chance: (p: number) => next() / 4294967296 < p };
}
type Rng = ReturnType<typeof rng>;

const COLUMN_KINDS: (() => FuzzColumn)[] = [
  ...(['int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32'] as const).map((wire) => () => {
    const width = wire.endsWith('8') ? 1 : wire.endsWith('16') ? 2 : 4;
    return { kind: { k: 'number', wire, width } as ColumnKind, code: CODE[wire], unit: 0, width };
  }),
  () => ({ kind: { k: 'int64' }, code: CODE.int64, unit: 0, width: 8 }),
  () => ({ kind: { k: 'uint64' }, code: CODE.uint64, unit: 0, width: 8 }),
  () => ({ kind: { k: 'bool' }, code: CODE.bool, unit: 0, width: 1 }),
  ...(['s', 'ms', 'us', 'ns'] as const).map((unit) => () => ({ kind: { k: 'timestamp', unit, tz: unit === 'us' } as ColumnKind, code: CODE.ts, unit: UNIT[unit], width: 8 })),
  () => ({ kind: { k: 'date' }, code: CODE.date, unit: 0, width: 4 }),
  ...([2, 4, 8] as const).map((width) => () => ({ kind: { k: 'decimal', width, scale: 0, signed: true } as ColumnKind, code: width === 2 ? CODE.int16 : width === 4 ? CODE.int32 : CODE.int64, unit: 0, width })),
  () => ({ kind: { k: 'varchar' }, code: CODE.varchar, unit: 0, width: 16 }),
  () => ({ kind: { k: 'json', names: ['a', 'b'], types: ['INTEGER', 'VARCHAR'] }, code: CODE.json, unit: 0, width: 16 }),
  () => ({ kind: { k: 'null' }, code: CODE.null, unit: 0, width: 1 }),
];

/** Every kind once, in order, then `extra` random ones. */
export function fuzzColumns(r: Rng, extra: number): FuzzColumn[] {
  return [...COLUMN_KINDS.map((make) => make()), ...Array.from({ length: extra }, () => COLUMN_KINDS[r.below(COLUMN_KINDS.length)]!())];
}

/** Validity with NULL runs: all valid (no bitmap), all NULL, long runs, or scattered. */
function validityOf(r: Rng, rows: number): Uint8Array | null {
  const style = r.below(5);
  if (style === 0) return null;
  const v = new Uint8Array(Math.ceil(rows / 64) * 8);
  let valid = r.chance(0.5);
  let left = 0;
  for (let i = 0; i < rows; i++) {
    if (style === 1) valid = false;
    else if (style === 2) {
      if (left-- <= 0) {
        valid = !valid;
        left = r.below(200);
      }
    } else valid = !r.chance(style === 3 ? 0.5 : 0.05);
    if (valid) v[i >> 3]! |= 1 << (i & 7);
  }
  return v;
}

const ENCODER = new TextEncoder();
const CHARS = ['a', 'Z', '0', ' ', '"', '\\', '/', 'é', 'ß', '中', '𝄞', '\n', '\t', '\r', '\b', '\f', '\u0000', '\u0001', '\u001f', '\u007f', '\u2028'];

/** A string of `len` characters: mostly clean ASCII runs (the 8-byte fast path), sometimes anything. */
function text(r: Rng, len: number): string {
  if (r.chance(0.5)) return 'abcdefghijklmnopqrstuvwxyz'.repeat(Math.ceil(len / 26)).slice(0, len);
  // A mixed run repeated: the escapes and multi-byte characters, at the cost of a few random draws.
  const run = Array.from({ length: Math.min(len, 64) }, () => (r.chance(0.7) ? String.fromCharCode(97 + r.below(26)) : CHARS[r.below(CHARS.length)]!)).join('');
  return run.repeat(Math.ceil(len / Math.max(run.length, 1))).slice(0, len);
}

function stringBytesOf(r: Rng, json: boolean): Uint8Array {
  const enc = ENCODER;
  if (json) {
    // DuckDB's rendering of a row of two columns: `[v,v]`, any length.
    const n = r.below(4);
    return enc.encode(`[${r.below(1000) - 500},${JSON.stringify(text(r, n === 0 ? 0 : n === 1 ? r.below(8) : n === 2 ? 20 + r.below(40) : 3000))}]`);
  }
  const size = r.below(10);
  const len = size === 0 ? 0 : size < 5 ? 1 + r.below(12) : size < 9 ? 13 + r.below(200) : r.chance(0.01) ? 100_000 + r.below(50_000) : r.chance(0.2) ? 1000 + r.below(4000) : 13 + r.below(600);
  let bytes = enc.encode(text(r, len));
  // Inline strings of exactly 12 bytes and long ones of exactly 13 are the edges.
  if (size === 4) bytes = enc.encode('x'.repeat(12));
  return bytes;
}

function garbage(r: Rng, view: DataView, at: number, width: number): void {
  for (let b = 0; b < width; b += 4) view.setUint32(at + b, r.u32(), true);
}

/** One fuzzed chunk of `rows` rows. */
function fuzzChunk(r: Rng, columns: FuzzColumn[], rows: number): FuzzChunk {
  const heap: Heap = { bytes: new Uint8Array(1 << 16), length: 0 };
  const data: Uint8Array[] = [];
  const validity: (Uint8Array | null)[] = [];
  for (const col of columns) {
    // Room for a 16-byte read past any slot keeps a wide load of the last value in bounds.
    const d = new Uint8Array(rows * col.width + 16);
    const view = new DataView(d.buffer);
    const v = col.kind.k === 'null' ? validityOf(r, rows) ?? new Uint8Array(Math.ceil(rows / 64) * 8) : validityOf(r, rows);
    for (let i = 0; i < rows; i++) {
      const at = i * col.width;
      if (v !== null && (v[i >> 3]! & (1 << (i & 7))) === 0) {
        // Under a NULL, DuckDB leaves the slot as the memory was.
        garbage(r, view, at, col.width);
        continue;
      }
      writeValue(r, col, view, d, at, heap);
    }
    data.push(d);
    validity.push(v);
  }
  return { rows, data, validity, heap: heap.bytes.slice(0, heap.length) };
}

interface Heap {
  bytes: Uint8Array;
  length: number;
}

function writeValue(r: Rng, col: FuzzColumn, view: DataView, d: Uint8Array, at: number, heap: Heap): void {
  const k = col.kind;
  switch (k.k) {
    case 'number':
    case 'decimal':
      // Any bits: every value of the width is a valid number (a later row overwrites the spill of a narrow one).
      if (col.width === 8) view.setBigInt64(at, edgeInt64(r), true);
      else garbage(r, view, at, col.width);
      return;
    case 'int64':
    case 'uint64':
      view.setBigInt64(at, edgeInt64(r), true);
      return;
    case 'bool':
      d[at] = r.below(2);
      return;
    case 'timestamp': {
      const per = PER_SEC[k.unit];
      const pick = r.below(20);
      // DuckDB's infinities, years beyond 9999 and before 0000 (handed back), and ordinary times.
      const v =
        pick === 0 ? 9223372036854775807n : pick === 1 ? -9223372036854775807n : pick === 2 ? (253402300800n + BigInt(r.below(1e6))) * per : pick === 3 ? (-62167219200n - 1n - BigInt(r.below(1e6))) * per : BigInt(r.u32()) * per + BigInt(r.u32()) % per - 2n ** 31n * per;
      view.setBigInt64(at, k.unit === 'ns' && (v > 9223372036854775807n || v < -9223372036854775807n) ? 0n : v, true);
      return;
    }
    case 'date': {
      const pick = r.below(20);
      view.setInt32(at, pick === 0 ? 2147483647 : pick === 1 ? -2147483647 : pick === 2 ? 2932897 + r.below(1e6) : pick === 3 ? -719529 - r.below(1e6) : r.below(2932896 + 719528) - 719528, true);
      return;
    }
    case 'varchar':
    case 'json': {
      const bytes = stringBytesOf(r, k.k === 'json');
      view.setUint32(at, bytes.length, true);
      if (bytes.length <= 12) {
        d.set(bytes, at + 4);
        // DuckDB zero-fills an inline string's unused bytes.
      } else {
        d.set(bytes.subarray(0, 4), at + 4);
        view.setBigUint64(at + 8, BigInt(heap.length), true);
        if (heap.length + bytes.length > heap.bytes.length) {
          const grown = new Uint8Array((heap.length + bytes.length) * 2);
          grown.set(heap.bytes.subarray(0, heap.length));
          heap.bytes = grown;
        }
        heap.bytes.set(bytes, heap.length);
        heap.length += bytes.length;
      }
      return;
    }
    default:
      return;
  }
}

function edgeInt64(r: Rng): bigint {
  const pick = r.below(8);
  if (pick === 0) return -9223372036854775808n;
  if (pick === 1) return 9223372036854775807n;
  if (pick === 2) return BigInt(r.below(100)) - 50n;
  if (pick === 3) return 2n ** 53n + BigInt(r.below(3)) - 1n;
  return BigInt.asIntN(64, (BigInt(r.u32()) << 32n) | BigInt(r.u32()));
}

/** Case `seed`: every kind plus a few random columns, over one to three chunks of up to 2048 rows. */
export function fuzzCase(seed: number): FuzzCase {
  const r = rng(seed * 2654435761);
  const columns = fuzzColumns(r, r.below(4));
  const chunks = Array.from({ length: 1 + r.below(3) }, () => fuzzChunk(r, columns, r.chance(0.2) ? 1 + r.below(5) : 1 + r.below(2048)));
  return { seed, columns, chunks };
}

/** A chunk at real addresses: string headers of valid long strings point into its heap (kept alive by the returned arrays). */
export interface PlacedChunk {
  rows: number;
  data: Uint8Array[];
  validity: (Uint8Array | null)[];
  /** As ResultChunk.addresses: rows, then per column data and validity (0: all valid). */
  addresses: Float64Array;
  heap: Uint8Array;
}

export function place(chunk: FuzzChunk, columns: FuzzColumn[]): PlacedChunk {
  const heap = new Uint8Array(chunk.heap.length + 8);
  heap.set(chunk.heap);
  const base = ptr(heap);
  const data = chunk.data.map((d, ci) => {
    const copy = d.slice();
    const k = columns[ci]!.kind.k;
    if (k === 'varchar' || k === 'json') {
      const view = new DataView(copy.buffer);
      const v = chunk.validity[ci];
      for (let i = 0; i < chunk.rows; i++) {
        const valid = !v || (v[i >> 3]! & (1 << (i & 7))) !== 0;
        if (valid && view.getUint32(i * 16, true) > 12) view.setBigUint64(i * 16 + 8, BigInt(base) + view.getBigUint64(i * 16 + 8, true), true);
      }
    }
    return copy;
  });
  const validity = chunk.validity.map((v) => (v ? v.slice() : null));
  const addresses = new Float64Array(1 + 2 * columns.length);
  addresses[0] = chunk.rows;
  data.forEach((d, ci) => {
    addresses[1 + 2 * ci] = ptr(d);
    addresses[2 + 2 * ci] = validity[ci] ? ptr(validity[ci]!) : 0;
  });
  return { rows: chunk.rows, data, validity, addresses, heap };
}

/**
 * The corpus file of the sanitizer harness (tests/native/harness.c reads it): u32 cases; per case
 * u32 columns, u32 chunks, per column u32 code and unit and width; per chunk u32 rows, u32 heap
 * length and the heap, then per column u32 data length and data, u32 validity length (0: all
 * valid) and validity. All little-endian.
 */
export function corpusFile(cases: FuzzCase[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const u32 = (n: number) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, n, true);
    parts.push(b);
  };
  u32(cases.length);
  for (const c of cases) {
    u32(c.columns.length);
    u32(c.chunks.length);
    for (const col of c.columns) {
      u32(col.code);
      u32(col.unit);
      u32(col.width);
    }
    for (const ch of c.chunks) {
      u32(ch.rows);
      u32(ch.heap.length);
      parts.push(ch.heap);
      ch.data.forEach((d, ci) => {
        u32(d.length);
        parts.push(d);
        const v = ch.validity[ci];
        u32(v ? v.length : 0);
        if (v) parts.push(v);
      });
    }
  }
  return Buffer.concat(parts);
}

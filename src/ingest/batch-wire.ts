/**
 * ColumnBatches in a form that crosses a thread boundary (postMessage) cheaply. A structured clone
 * pays per object: the batches of one 100,000-row flush as nested objects with a typed array per
 * column cost ~70-100 µs of the event loop's time per message (measured against a worker in Bun),
 * the same rows as a few flat arrays ~18 µs. So the wire form is flat:
 * - `buffers`: the distinct buffers the arrays live in. Shared memory (what the parsers make) is shared
 *   as it is; any other array is copied once into a buffer of its own, which is then transferred.
 * - `strings`: measurement and column names, and each string column's dictionary, in order.
 * - `layout`: numbers that say how to read them back (see `toWire`).
 * String columns travel as codes plus their dictionary, so no per-row strings are cloned.
 */
import { type Column, type ColumnBatch, dictionaryColumn } from './column-batch.ts';
import { coalesceSmallBatches } from './coalesce-batches.ts';
import { isShared } from './shared-arrays.ts';

/** ColumnBatches on the wire (structured-clone friendly; see the module comment). */
export interface WireBatches {
  buffers: ArrayBufferLike[];
  strings: (string | null)[];
  layout: Float64Array;
}

type Typed = Float64Array | BigInt64Array | Uint8Array | Uint32Array;

// Column kinds in `layout`.
const K_FLOAT = 0;
const K_INT = 1;
const K_BOOL = 2;
const K_CODES = 3;
const NO_ARRAY = -1;

/**
 * Plain strings as codes: a structured clone copies every string it meets, which for a tag column of
 * interned values (line protocol) cost more than parsing them; here each distinct value crosses once.
 */
function encode(values: readonly (string | null)[], length: number): { codes: Uint32Array; dictionary: (string | null)[] } {
  const codes = new Uint32Array(new SharedArrayBuffer(length * 4));
  const dictionary: (string | null)[] = [null];
  const index = new Map<string, number>();
  for (let i = 0; i < length; i++) {
    const v = values[i];
    if (v === null || v === undefined) continue;
    let code = index.get(v);
    if (code === undefined) index.set(v, (code = dictionary.push(v) - 1));
    codes[i] = code;
  }
  return { codes, dictionary };
}

/** Collects the numbers, strings and buffers of a wire form. */
class Packer {
  readonly buffers: ArrayBufferLike[] = [];
  readonly transfer: ArrayBuffer[] = [];
  readonly strings: (string | null)[] = [];
  readonly numbers: number[] = [];
  private readonly bufferIndex = new Map<ArrayBufferLike, number>();

  string(s: string): void {
    this.numbers.push(this.strings.push(s) - 1);
  }

  /** An array as [buffer index, byte offset, length]: `a` itself when shared, else a compact transferred copy (the original stays untouched). */
  array(a: Typed | null): void {
    if (a === null) return void this.numbers.push(NO_ARRAY, 0, 0);
    let view = a;
    if (!isShared(a)) {
      view = a.slice();
      this.transfer.push(view.buffer as ArrayBuffer);
    }
    let at = this.bufferIndex.get(view.buffer);
    if (at === undefined) this.bufferIndex.set(view.buffer, (at = this.buffers.push(view.buffer) - 1));
    this.numbers.push(at, view.byteOffset, view.length);
  }
}

/**
 * Batches in wire form plus the buffers to pass as postMessage's transfer list (runs of small batches
 * joined first). Layout: batch count; per batch its measurement (string index), row count, time array
 * and column count; per column its name, kind and tag flag, then for numbers and booleans the values and
 * validity arrays (or none), for codes the codes array and the dictionary's first string index and size.
 */
export function toWire(batches: readonly ColumnBatch[]): { batches: WireBatches; transfer: ArrayBuffer[] } {
  const p = new Packer();
  const joined = coalesceSmallBatches(batches);
  p.numbers.push(joined.length);
  for (const b of joined) {
    p.string(b.measurement);
    p.numbers.push(b.length);
    p.array(b.time);
    p.numbers.push(b.columns.size);
    for (const [name, col] of b.columns) {
      p.string(name);
      if (col.type !== 'string') {
        p.numbers.push(col.type === 'float64' ? K_FLOAT : col.type === 'int64' ? K_INT : K_BOOL, 0);
        p.array(col.values);
        p.array(col.valid);
        continue;
      }
      const { codes, dictionary } = col.dict ?? encode(col.values, b.length);
      p.numbers.push(K_CODES, col.tag ? 1 : 0);
      p.array(codes);
      p.numbers.push(p.strings.length, dictionary.length);
      for (const s of dictionary) p.strings.push(s);
    }
  }
  return { batches: { buffers: p.buffers, strings: p.strings, layout: Float64Array.from(p.numbers) }, transfer: p.transfer };
}

/** The ColumnBatches that `toWire` sent. */
export function fromWire(wire: WireBatches): ColumnBatch[] {
  const { buffers, strings, layout } = wire;
  let at = 0;
  const next = () => layout[at++]!;
  const array = <T>(Ctor: new (buf: ArrayBufferLike, offset: number, length: number) => T): T | null => {
    const buffer = next();
    const offset = next();
    const length = next();
    return buffer === NO_ARRAY ? null : new Ctor(buffers[buffer]!, offset, length);
  };
  const out: ColumnBatch[] = [];
  for (let n = next(); n > 0; n--) {
    const measurement = strings[next()]!;
    const length = next();
    const time = array(Float64Array)!;
    const columns = new Map<string, Column>();
    for (let c = next(); c > 0; c--) {
      const name = strings[next()]!;
      const kind = next();
      const tag = next() === 1;
      if (kind === K_CODES) {
        const codes = array(Uint32Array)!;
        const first = next();
        const dictionary = strings.slice(first, first + next());
        columns.set(name, dictionaryColumn({ codes, dictionary }, tag));
      } else if (kind === K_FLOAT) columns.set(name, { type: 'float64', values: array(Float64Array)!, valid: array(Uint8Array), tag: false });
      else if (kind === K_INT) columns.set(name, { type: 'int64', values: array(BigInt64Array)!, valid: array(Uint8Array), tag: false });
      else columns.set(name, { type: 'bool', values: array(Uint8Array)!, valid: array(Uint8Array), tag: false });
    }
    out.push({ measurement, length, time, columns });
  }
  return out;
}

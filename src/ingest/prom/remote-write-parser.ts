/**
 * Prometheus remote-write 1.0: a snappy-compressed (block format) protobuf WriteRequest, decoded
 * by hand (the schema is three small messages) straight into one ColumnBatch per metric name:
 * labels become tag columns, each sample a row with field `value` at its millisecond timestamp.
 * Staleness markers are dropped; other NaNs are stored as NULL (Parquet statistics stay usable).
 */
import snappy from 'snappyjs';
import { invalid, tooLarge } from '../../lib/errors.ts';
import { dictionaryColumn, type Column, type ColumnBatch } from '../column-batch.ts';
import { trimShared } from '../shared-arrays.ts';
import { ByteInterner, hashBytes } from '../byte-interner.ts';

/** The parse result: batches and what was dropped. */
export interface RemoteWriteResult {
  batches: ColumnBatch[];
  samples: number;
  staleDropped: number;
}

/** Field tags (field number << 3 | wire type) of the WriteRequest schema. */
const SERIES_TAG = (1 << 3) | 2; // WriteRequest.timeseries, TimeSeries.labels, Label.name
const SAMPLES_TAG = (2 << 3) | 2; // TimeSeries.samples, Label.value
const VALUE_TAG = (1 << 3) | 1; // Sample.value (double)
const TIMESTAMP_TAG = (2 << 3) | 0; // Sample.timestamp (int64 ms)

/** Labels that would collide with svc's own columns are stored under this prefix. */
const RESERVED = new Set(['time', 'value']);

const utf8 = new TextDecoder();
/** Label names and values repeat on every series of a request: each distinct one is decoded once. */
const interner = new ByteInterner();

/** Uncompresses a snappy block, refusing one that claims more than `maxBytes` uncompressed. */
export function uncompressSnappy(body: Uint8Array, maxBytes: number): Uint8Array {
  let len = 0;
  let shift = 0;
  for (let i = 0; i < Math.min(body.length, 5); i++) {
    len += (body[i]! & 0x7f) * 2 ** shift;
    if (body[i]! < 0x80) break;
    shift += 7;
  }
  if (len > maxBytes) throw tooLarge(`cannot accept remote-write body: it uncompresses to ${len} bytes, more than server.max_payload_size (${maxBytes})`);
  try {
    return snappy.uncompress(body, maxBytes);
  } catch (err) {
    throw invalid(`cannot decode remote-write body: not snappy block-compressed data (${(err as Error).message})`);
  }
}

/** One series as read in the first pass: its labels and where its samples are. */
interface SeriesRef {
  /** Label names and values, alternating (no tuple per label). */
  labels: string[];
  samples: number[];
}

/** Measurement names of metric names seen before (recording rules' `:` becomes `_`). */
const measurementOf = new Map<string, string>();
function measurementName(metric: string): string {
  let m = measurementOf.get(metric);
  if (m === undefined) {
    m = metric.replace(/:/g, '_');
    if (measurementOf.size >= 65_536) measurementOf.clear();
    measurementOf.set(metric, m);
  }
  return m;
}

/**
 * Decodes an uncompressed WriteRequest into columns. Two passes: the first reads labels and counts
 * samples per metric, so the second writes straight into exactly sized shared arrays (tags as
 * dictionary codes: a series repeats its labels on every sample).
 */
export function parseRemoteWrite(buf: Uint8Array): RemoteWriteResult {
  const r = new ProtoReader(buf);
  const byMetric = new Map<string, { series: SeriesRef[]; samples: number; tags: Set<string> }>();
  while (!r.done()) {
    const tag = r.varint();
    if (tag !== SERIES_TAG) {
      r.skip(tag & 7);
      continue;
    }
    const end = r.lengthEnd();
    const ref: SeriesRef = { labels: [], samples: [] };
    let metric = '';
    while (r.at < end) {
      const t = r.varint();
      if (t === SERIES_TAG) {
        const lend = r.lengthEnd();
        let name = '';
        let value = '';
        while (r.at < lend) {
          const lt = r.varint();
          if (lt === SERIES_TAG) name = r.string();
          else if (lt === SAMPLES_TAG) value = r.string();
          else r.skip(lt & 7);
        }
        if (name === '__name__') metric = value;
        else ref.labels.push(RESERVED.has(name) ? `label_${name}` : name, value);
      } else if (t === SAMPLES_TAG) {
        // Start and end of each sample; read in the second pass.
        const send = r.lengthEnd();
        ref.samples.push(r.at, send);
        r.at = send;
      } else r.skip(t & 7);
    }
    if (!metric) throw invalid('cannot accept remote-write series without a __name__ label');
    const measurement = measurementName(metric);
    let m = byMetric.get(measurement);
    if (!m) byMetric.set(measurement, (m = { series: [], samples: 0, tags: new Set() }));
    m.series.push(ref);
    m.samples += ref.samples.length / 2;
    for (let i = 0; i < ref.labels.length; i += 2) m.tags.add(ref.labels[i]!);
  }
  // One shared allocation for every column of the request: allocating shared memory is the
  // costly part (tens of µs each), and a request carries a few columns for each of many metrics.
  let bytes = 0;
  for (const m of byMetric.values()) bytes += m.samples * (16 + 4 * m.tags.size) + 8 * (2 + m.tags.size);
  const arena = { buf: new SharedArrayBuffer(bytes), at: 0 };
  const out: RemoteWriteResult = { batches: [], samples: 0, staleDropped: 0 };
  for (const [measurement, m] of byMetric) {
    const batch = columnsOf(r, measurement, m.series, m.samples, arena, out);
    if (batch) out.batches.push(batch);
  }
  return out;
}

/** Carves typed arrays out of one SharedArrayBuffer; each starts 8-byte aligned (the total reserves the padding). */
interface Arena {
  buf: SharedArrayBuffer;
  at: number;
}
function float64s(a: Arena, n: number): Float64Array {
  a.at = (a.at + 7) & ~7;
  const v = new Float64Array(a.buf, a.at, n);
  a.at += n * 8;
  return v;
}
function uint32s(a: Arena, n: number): Uint32Array {
  a.at = (a.at + 7) & ~7;
  const v = new Uint32Array(a.buf, a.at, n);
  a.at += n * 4;
  return v;
}

/** The second pass for one metric: rows of `series` into columns (`n` samples at most). */
function columnsOf(r: ProtoReader, measurement: string, series: SeriesRef[], n: number, arena: Arena, out: RemoteWriteResult): ColumnBatch | null {
  const time = float64s(arena, n);
  const values = float64s(arena, n);
  let valid: Uint8Array | null = null;
  const tags = new Map<string, { codes: Uint32Array; dictionary: (string | null)[]; index: Map<string, number> }>();
  let row = 0;
  const cols: Uint32Array[] = [];
  const codes: number[] = [];
  for (const s of series) {
    cols.length = 0;
    codes.length = 0;
    for (let i = 0; i < s.labels.length; i += 2) {
      const value = s.labels[i + 1]!;
      let t = tags.get(s.labels[i]!);
      if (!t) tags.set(s.labels[i]!, (t = { codes: uint32s(arena, n), dictionary: [null], index: new Map() }));
      let code = t.index.get(value);
      if (code === undefined) {
        code = t.dictionary.push(value) - 1;
        t.index.set(value, code);
      }
      cols.push(t.codes);
      codes.push(code);
    }
    for (let k = 0; k < s.samples.length; k += 2) {
      r.at = s.samples[k]!;
      const send = s.samples[k + 1]!;
      let value = 0;
      let stale = false;
      let ms = 0;
      while (r.at < send) {
        const t = r.varint();
        if (t === VALUE_TAG) {
          stale = r.isStaleMarker();
          value = r.double();
        } else if (t === TIMESTAMP_TAG) ms = r.int64();
        else r.skip(t & 7);
      }
      if (stale) {
        out.staleDropped++;
        continue;
      }
      time[row] = ms * 1000;
      if (Number.isNaN(value)) (valid ??= new Uint8Array(n).fill(1))[row] = 0;
      else values[row] = value;
      for (let c = 0; c < cols.length; c++) cols[c]![row] = codes[c]!;
      row++;
    }
  }
  if (row === 0) return null;
  out.samples += row;
  const columns = new Map<string, Column>();
  for (const [name, t] of tags) columns.set(name, dictionaryColumn({ codes: trimShared(t.codes, row), dictionary: t.dictionary }, true));
  columns.set('value', { type: 'float64', values: trimShared(values, row), valid: valid ? valid.subarray(0, row) : null, tag: false });
  return { measurement, length: row, time: trimShared(time, row), columns };
}

/** Prometheus' staleness marker: one particular NaN (value.StaleNaN). */
const STALE_HI = 0x7ff00000;
const STALE_LO = 0x00000002;

/** Protobuf wire-format reading (varints, length-delimited fields, fixed64). */
class ProtoReader {
  at = 0;
  private readonly view: DataView;
  constructor(private readonly b: Uint8Array) {
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  done(): boolean {
    return this.at >= this.b.length;
  }
  varint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.at >= this.b.length) throw invalid('cannot decode remote-write body: truncated protobuf');
      const byte = this.b[this.at++]!;
      v += (byte & 0x7f) * mul;
      if (byte < 0x80) return v;
      mul *= 128;
    }
    throw invalid('cannot decode remote-write body: varint too long');
  }
  /** A signed int64 varint (negative values are ten bytes of two's complement). */
  int64(): number {
    const start = this.at;
    const v = this.varint();
    if (this.at - start < 10) return v;
    this.at = start;
    let big = 0n;
    for (let i = 0n; i < 10n; i++) big |= BigInt(this.b[this.at++]! & 0x7f) << (7n * i);
    return Number(BigInt.asIntN(64, big));
  }
  lengthEnd(): number {
    const len = this.varint();
    const end = this.at + len;
    if (end > this.b.length) throw invalid('cannot decode remote-write body: field runs past the end');
    return end;
  }
  string(): string {
    const end = this.lengthEnd();
    const hash = hashBytes(this.b, this.at, end);
    let s = interner.get(this.b, this.at, end, hash);
    if (s === null) {
      s = utf8.decode(this.b.subarray(this.at, end));
      interner.set(this.b, this.at, end, hash, s);
    }
    this.at = end;
    return s;
  }
  isStaleMarker(): boolean {
    return this.view.getUint32(this.at + 4, true) === STALE_HI && this.view.getUint32(this.at, true) === STALE_LO;
  }
  double(): number {
    const v = this.view.getFloat64(this.at, true);
    this.at += 8;
    return v;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.at += 8;
    else if (wire === 2) this.at = this.lengthEnd();
    else if (wire === 5) this.at += 4;
    else throw invalid(`cannot decode remote-write body: unsupported protobuf wire type ${wire}`);
  }
}

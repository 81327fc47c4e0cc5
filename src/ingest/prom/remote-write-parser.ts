/**
 * Prometheus remote-write 1.0: an uncompressed protobuf WriteRequest, read by hand over the bytes
 * (the schema is three small messages) straight into one ColumnBatch per metric name: labels become
 * tag columns, each sample a row with field `value` at its millisecond timestamp. Staleness markers
 * are dropped; other NaNs are stored as NULL (Parquet statistics stay usable).
 *
 * No object per series or sample. Pass 1 walks the request once: each TimeSeries' label bytes are
 * looked up in the process-wide SeriesTable (decoded only the first time a series is seen), its
 * samples counted, and it is chained to its metric's list. Pass 2 fills, metric by metric, exactly
 * sized columns carved out of one shared allocation; tag columns are dictionary codes whose
 * per-batch numbering is kept in generation-stamped arrays indexed by the table's pair ids.
 */
import { invalid } from '../../lib/errors.ts';
import { dictionaryColumn, type Column, type ColumnBatch } from '../column-batch.ts';
import { trimShared } from '../shared-arrays.ts';
import { hashKey, SeriesTable } from './series-table.ts';
import { uncompressSnappyScratch } from './snappy.ts';

export { uncompressSnappy } from './snappy.ts';

/** The parse result: batches and what was dropped. */
export interface RemoteWriteResult {
  batches: ColumnBatch[];
  samples: number;
  staleDropped: number;
}

/** Field tags (field number << 3 | wire type) of the WriteRequest schema; each fits in one byte. */
export const SERIES_TAG = (1 << 3) | 2; // WriteRequest.timeseries, TimeSeries.labels, Label.name
export const SAMPLES_TAG = (2 << 3) | 2; // TimeSeries.samples, Label.value
const VALUE_TAG = (1 << 3) | 1; // Sample.value (double)
const TIMESTAMP_TAG = (2 << 3) | 0; // Sample.timestamp (int64 ms)

/** Labels that would collide with svc's own columns are stored under this prefix. */
const RESERVED = new Set(['time', 'value']);

const utf8 = new TextDecoder();
export const table = new SeriesTable();

export const truncated = () => invalid('cannot decode remote-write body: truncated protobuf');

/** Measurement name of a metric name (recording rules' `:` becomes `_`). */
const measurementName = (metric: string) => metric.replace(/:/g, '_');

/** Growable Int32 scratch kept between requests (no allocation per request once warm). */
export function atLeast(a: Int32Array<ArrayBuffer>, n: number): Int32Array<ArrayBuffer> {
  if (a.length >= n) return a;
  let size = a.length;
  while (size < n) size *= 2;
  const b = new Int32Array(size);
  b.set(a);
  return b;
}

/** Per TimeSeries of the current request: series id, where its fields after the labels start and end, next record of the same metric. */
let recSeries = new Int32Array(4096);
let recFrom = new Int32Array(4096);
let recEnd = new Int32Array(4096);
let recNext = new Int32Array(4096);
/** Metric id -> stamp of the request that saw it, and its index in that request's metric list. */
let metricStamp = new Int32Array(256);
let metricSlot = new Int32Array(256);
/** Tag-name id -> its column in the metric being filled; pair id -> stamp of the batch that numbered it, and its dictionary code. */
let nameColumn = new Int32Array(256);
let pairStamp = new Int32Array(4096);
let pairCode = new Int32Array(4096);
let stamp = 0;
/** The label fields of a TimeSeries whose labels are not all in front, copied together to form its key. */
let keyScratch = new Uint8Array(1024);

function nextStamp(): number {
  if (stamp >= 0x3fffffff) {
    stamp = 0;
    metricStamp.fill(0);
    pairStamp.fill(0);
  }
  return ++stamp;
}

/** One metric of the request, filled in pass 2. */
export interface MetricRun {
  metric: number;
  /** Samples (an upper bound of rows: stale markers are dropped). */
  samples: number;
  /** Tag-name ids of every series of the metric (the union of their shapes), in order of appearance. */
  names: number[];
  lastShape: number;
  head: number;
  tail: number;
}

/**
 * A request body as received (snappy block) into columns. The body is uncompressed into a buffer the
 * next call reuses: nothing of it outlives the parse (strings are decoded, numbers copied).
 */
export function decodeRemoteWrite(body: Uint8Array, maxBytes: number): RemoteWriteResult {
  return parseRemoteWrite(uncompressSnappyScratch(body, maxBytes));
}

/** Decodes an uncompressed WriteRequest into columns, one batch per metric name. */
export function parseRemoteWrite(buf: Uint8Array): RemoteWriteResult {
  const request = beginRequest(buf);
  const r = request.reader;
  const n = buf.length;
  let previous = -1;
  // Positions live in locals here (the hot loop); the Reader takes over for anything unusual.
  let at = 0;
  while (at < n) {
    if (buf[at] !== SERIES_TAG) {
      r.at = at;
      r.skip(r.varint() & 7);
      at = r.at;
      continue;
    }
    let len = buf[++at]!;
    if (len < 0x80 && at < n) at++;
    else {
      r.at = at;
      len = r.varint();
      at = r.at;
    }
    const end = at + len;
    if (end > n) throw truncated();
    const labelsStart = at;
    while (at < end && buf[at] === SERIES_TAG) {
      const l = buf[at + 1]!;
      if (l < 0x80 && at + 1 < end) at += 2 + l;
      else {
        r.at = at + 1;
        at = r.lengthEnd(end);
      }
    }
    if (at > end) throw truncated();
    const labelsEnd = at;
    let samples = 0;
    let stray = false;
    while (at < end) {
      const t = buf[at]!;
      const l = buf[at + 1]!;
      if (t === SAMPLES_TAG && l < 0x80 && at + 1 < end) {
        at += 2 + l;
        samples++;
        continue;
      }
      r.at = at;
      const tag = r.varint();
      if (tag === SAMPLES_TAG) {
        r.at = r.lengthEnd(end);
        samples++;
      } else {
        if (tag === SERIES_TAG) stray = true;
        r.skip(tag & 7, end);
      }
      at = r.at;
    }
    if (at > end) throw truncated();
    let sid: number;
    if (stray) sid = seriesOf(keyOfStrayLabels(r, labelsStart, end), 0, keyLength);
    else sid = seriesGuessed(previous, buf, labelsStart, labelsEnd);
    previous = sid;
    at = end;
    if (samples > 0) addRecord(request, sid, labelsEnd, end, samples);
  }
  return finishRequest(request);
}

/** One request being parsed: pass 1 fills its runs through `addRecord`, `finishRequest` does pass 2. */
export interface RequestParse {
  reader: Reader;
  stamp: number;
  runs: MetricRun[];
  records: number;
}

/** Starts pass 1 over the uncompressed message `buf`. */
export function beginRequest(buf: Uint8Array): RequestParse {
  table.startRequest();
  return { reader: new Reader(buf), stamp: nextStamp(), runs: [], records: 0 };
}

/**
 * The series id of the label fields `key[start, end)` (1.0 Label encoding). Senders repeat their
 * series in the same order request after request: the series that followed `previous` last time is
 * tried before hashing.
 */
export function seriesGuessed(previous: number, key: Uint8Array, start: number, end: number): number {
  const guess = previous >= 0 ? table.successor[previous]! : -1;
  if (guess >= 0 && table.matches(guess, key, start, end)) return guess;
  const sid = seriesOf(key, start, end);
  if (previous >= 0) table.successor[previous] = sid;
  return sid;
}

/**
 * Records that series `sid` has `samples` Sample fields among the fields at [from, end) of the
 * request (pass 2 reads them there and skips every other field).
 */
export function addRecord(request: RequestParse, sid: number, from: number, end: number, samples: number): void {
  const rec = request.records++;
  if (rec >= recSeries.length) {
    recSeries = atLeast(recSeries, rec + 1);
    recFrom = atLeast(recFrom, rec + 1);
    recEnd = atLeast(recEnd, rec + 1);
    recNext = atLeast(recNext, rec + 1);
  }
  recSeries[rec] = sid;
  recFrom[rec] = from;
  recEnd[rec] = end;
  recNext[rec] = -1;
  const metric = table.seriesMetric[sid]!;
  if (metric >= metricStamp.length) {
    metricStamp = atLeast(metricStamp, metric + 1);
    metricSlot = atLeast(metricSlot, metric + 1);
  }
  const runs = request.runs;
  let run: MetricRun;
  if (metricStamp[metric] !== request.stamp) {
    metricStamp[metric] = request.stamp;
    metricSlot[metric] = runs.length;
    runs.push((run = { metric, samples: 0, names: [], lastShape: -1, head: rec, tail: rec }));
  } else {
    run = runs[metricSlot[metric]!]!;
    recNext[run.tail] = rec;
    run.tail = rec;
  }
  run.samples += samples;
  const shape = table.seriesShape[sid]!;
  if (shape !== run.lastShape) {
    run.lastShape = shape;
    for (const name of table.shapes[shape]!) if (!run.names.includes(name)) run.names.push(name);
  }
}

/** Pass 2: every recorded sample into columns, one batch per metric. */
export function finishRequest(request: RequestParse): RemoteWriteResult {
  const { runs, reader } = request;
  nameColumn = atLeast(nameColumn, table.names.length);
  pairStamp = atLeast(pairStamp, table.pairValue.length);
  pairCode = atLeast(pairCode, table.pairValue.length);
  // One shared region for every column of the request: allocating shared memory is the costly part
  // (tens of µs each), and a request carries a few columns for each of many metrics.
  let bytes = 0;
  for (const run of runs) bytes += run.samples * (16 + 4 * run.names.length) + 24;
  const arena = arenaOf(bytes);
  const out: RemoteWriteResult = { batches: [], samples: 0, staleDropped: 0 };
  for (const run of runs) {
    const batch = columnsOf(reader, run, arena, out);
    if (batch) out.batches.push(batch);
  }
  return out;
}

/** Length of the key last built by `keyOfStrayLabels`. */
let keyLength = 0;

/** Copies every label field of the TimeSeries at [start, end) into `keyScratch` (a sender that put labels after samples). */
function keyOfStrayLabels(r: Reader, start: number, end: number): Uint8Array {
  keyLength = 0;
  r.at = start;
  while (r.at < end) {
    const from = r.at;
    const t = r.varint();
    r.skip(t & 7, end);
    if (t !== SERIES_TAG) continue;
    const len = r.at - from;
    if (keyLength + len > keyScratch.length) {
      const grown = new Uint8Array(Math.max(keyScratch.length * 2, keyLength + len));
      grown.set(keyScratch.subarray(0, keyLength));
      keyScratch = grown;
    }
    keyScratch.set(r.bytes.subarray(from, r.at), keyLength);
    keyLength += len;
  }
  return keyScratch;
}

/** The series id of the label fields in `key[start, end)`, decoding and adding them when new. */
export function seriesOf(key: Uint8Array, start: number, end: number): number {
  const hash = hashKey(key, start, end);
  const sid = table.find(key, start, end, hash);
  if (sid >= 0) return sid;
  const r = new Reader(key);
  r.at = start;
  const labels: string[] = [];
  let metric = '';
  while (r.at < end) {
    r.at++; // a label field's tag (SERIES_TAG: the caller checked)
    const lend = r.lengthEnd(end);
    let name = '';
    let value = '';
    while (r.at < lend) {
      const t = r.varint();
      if (t === SERIES_TAG) name = r.string(lend);
      else if (t === SAMPLES_TAG) value = r.string(lend);
      else r.skip(t & 7, lend);
    }
    if (name === '__name__') metric = value;
    else labels.push(RESERVED.has(name) ? `label_${name}` : name, value);
  }
  if (!metric) throw invalid('cannot accept remote-write series without a __name__ label');
  return table.add(key, start, end, hash, measurementName(metric), labels);
}

/** Carves typed arrays out of one SharedArrayBuffer; each starts 8-byte aligned (the total reserves the padding). */
interface Arena {
  buf: SharedArrayBuffer;
  at: number;
}

/**
 * Requests' columns come out of shared slabs of this size: creating a SharedArrayBuffer (and later
 * collecting it) per request showed in profiles. A slab is freed once no buffered batch uses it any more.
 */
const SLAB_BYTES = 4 << 20;
let slab: Arena = { buf: new SharedArrayBuffer(0), at: 0 };

/** Room for `bytes` (8-byte aligned) in the current slab, a new one, or (large requests) an allocation of its own. */
function arenaOf(bytes: number): Arena {
  if (bytes > SLAB_BYTES / 4) return { buf: new SharedArrayBuffer(bytes), at: 0 };
  slab.at = (slab.at + 7) & ~7;
  if (slab.at + bytes > slab.buf.byteLength) slab = { buf: new SharedArrayBuffer(SLAB_BYTES), at: 0 };
  return slab;
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

/** Prometheus' staleness marker (value.StaleNaN), little-endian: 0x7ff0000000000002. */
export function isStaleMarker(b: Uint8Array, at: number): boolean {
  return b[at] === 2 && b[at + 1] === 0 && b[at + 2] === 0 && b[at + 3] === 0 && b[at + 4] === 0 && b[at + 5] === 0 && b[at + 6] === 0xf0 && b[at + 7] === 0x7f;
}

/** The dictionary each (metric, tag name) had in its last batch, by `metric * 2^21 + name`. */
const lastDictionaries = new Map<number, (string | null)[]>();
let lastDictionariesEpoch = -1;

/**
 * `dictionary`, or the equal one the same column had in its previous batch: a sender repeating its
 * series makes equal dictionaries request after request, and one shared array lets the flush join
 * their batches without renumbering each (see coalesce-batches.ts). Values are the table's strings,
 * so equal values are the same string and compare by identity.
 */
function sameDictionary(metric: number, name: number, dictionary: (string | null)[]): (string | null)[] {
  if (lastDictionariesEpoch !== table.epoch) {
    lastDictionaries.clear();
    lastDictionariesEpoch = table.epoch;
  }
  const key = metric * 2 ** 21 + name;
  const last = lastDictionaries.get(key);
  if (last !== undefined && last.length === dictionary.length) {
    let i = 1;
    while (i < last.length && last[i] === dictionary[i]) i++;
    if (i === last.length) return last;
  }
  lastDictionaries.set(key, dictionary);
  return dictionary;
}

/** Pass 2 for one metric: its records' samples into columns. */
function columnsOf(r: Reader, run: MetricRun, arena: Arena, out: RemoteWriteResult): ColumnBatch | null {
  const n = run.samples;
  const time = float64s(arena, n);
  const values = float64s(arena, n);
  let valid: Uint8Array | null = null;
  // Every tag column of the metric in one array, column c at [c * n, c * n + n): one typed array to
  // write through, and zeroes (NULL) where a series lacks a label.
  const columnCount = run.names.length;
  const codes = uint32s(arena, n * columnCount);
  const dictionaries: (string | null)[][] = [];
  for (let c = 0; c < columnCount; c++) {
    nameColumn[run.names[c]!] = c * n;
    dictionaries.push([null]);
  }
  const batchStamp = nextStamp();
  const { seriesPairStart, seriesPairCount, pairList, pairName, pairValue } = table;
  const b = r.bytes;
  let row = 0;
  for (let rec = run.head; rec >= 0; rec = recNext[rec]!) {
    const sid = recSeries[rec]!;
    const first = seriesPairStart[sid]!;
    const count = seriesPairCount[sid]!;
    for (let k = 0; k < count; k++) {
      const pair = pairList[first + k]!;
      if (pairStamp[pair] !== batchStamp) {
        pairStamp[pair] = batchStamp;
        pairCode[pair] = dictionaries[nameColumn[pairName[pair]!]! / n]!.push(pairValue[pair]!) - 1;
      }
    }
    const end = recEnd[rec]!;
    let at = recFrom[rec]!;
    while (at < end) {
      let l = b[at + 1]!;
      if (b[at] !== SAMPLES_TAG || !(l < 0x80 && at + 1 < end)) {
        r.at = at;
        const t = r.varint();
        if (t !== SAMPLES_TAG) {
          r.skip(t & 7, end);
          at = r.at;
          continue;
        }
        const e = r.lengthEnd(end);
        at = r.at;
        l = e - at;
      } else at += 2;
      const send = at + l;
      if (send > end) throw truncated();
      let value = 0;
      let stale = false;
      let ms = 0;
      while (at < send) {
        const st = b[at]!;
        if (st === VALUE_TAG) {
          if (at + 9 > send) throw truncated();
          f64Bytes[0] = b[at + 1]!;
          f64Bytes[1] = b[at + 2]!;
          f64Bytes[2] = b[at + 3]!;
          f64Bytes[3] = b[at + 4]!;
          f64Bytes[4] = b[at + 5]!;
          f64Bytes[5] = b[at + 6]!;
          f64Bytes[6] = b[at + 7]!;
          f64Bytes[7] = b[at + 8]!;
          value = f64[0]!;
          stale = value !== value && isStaleMarker(b, at + 1);
          at += 9;
        } else if (st === TIMESTAMP_TAG) {
          const from = ++at;
          let mul = 1;
          ms = 0;
          for (;;) {
            if (at >= send) throw truncated();
            const byte = b[at++]!;
            ms += (byte & 0x7f) * mul;
            if (byte < 0x80) break;
            mul *= 128;
            if (at - from === 10) throw invalid('cannot decode remote-write body: varint too long');
          }
          // Ten bytes: a negative int64 (before 1970), two's complement.
          if (at - from === 10) {
            r.at = from;
            ms = r.int64(send);
          }
        } else {
          r.at = at;
          r.skip(r.varint() & 7, send);
          at = r.at;
        }
      }
      if (stale) {
        out.staleDropped++;
        continue;
      }
      time[row] = ms * 1000;
      if (value !== value) (valid ??= new Uint8Array(n).fill(1))[row] = 0;
      else values[row] = value;
      for (let k = 0; k < count; k++) {
        const pair = pairList[first + k]!;
        codes[nameColumn[pairName[pair]!]! + row] = pairCode[pair]!;
      }
      row++;
    }
  }
  if (row === 0) return null;
  out.samples += row;
  const columns = new Map<string, Column>();
  for (let c = 0; c < columnCount; c++) {
    const column = trimShared(codes.subarray(c * n, c * n + n), row);
    columns.set(table.names[run.names[c]!]!, dictionaryColumn({ codes: column, dictionary: sameDictionary(run.metric, run.names[c]!, dictionaries[c]!) }, true));
  }
  columns.set('value', { type: 'float64', values: trimShared(values, row), valid: valid ? valid.subarray(0, row) : null, tag: false });
  return { measurement: table.metrics[run.metric]!, length: row, time: trimShared(time, row), columns };
}

/** A sample's double, assembled from its little-endian bytes (the platforms Bun runs on are little-endian). */
const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);

/** Protobuf wire-format reading (varints, length-delimited fields, fixed64), every read bounds-checked. */
export class Reader {
  at = 0;
  constructor(readonly bytes: Uint8Array) {}

  varint(): number {
    const b = this.bytes;
    if (this.at >= b.length) throw truncated();
    const first = b[this.at++]!;
    if (first < 0x80) return first;
    let v = first & 0x7f;
    let mul = 128;
    for (let i = 1; i < 10; i++) {
      if (this.at >= b.length) throw truncated();
      const byte = b[this.at++]!;
      v += (byte & 0x7f) * mul;
      if (byte < 0x80) return v;
      mul *= 128;
    }
    throw invalid('cannot decode remote-write body: varint too long');
  }

  /** A signed int64 varint (negative values are ten bytes of two's complement) that must end by `limit`. */
  int64(limit: number): number {
    const start = this.at;
    const v = this.varint();
    if (this.at > limit) throw truncated();
    if (this.at - start < 10) return v;
    let big = 0n;
    for (let i = 0; i < 10; i++) big |= BigInt(this.bytes[start + i]! & 0x7f) << BigInt(7 * i);
    return Number(BigInt.asIntN(64, big));
  }

  /** Reads a length prefix; returns where the field ends, which must be within `limit`. */
  lengthEnd(limit = this.bytes.length): number {
    const len = this.varint();
    const end = this.at + len;
    if (end > limit) throw invalid('cannot decode remote-write body: field runs past the end');
    return end;
  }

  string(limit: number): string {
    const end = this.lengthEnd(limit);
    const s = utf8.decode(this.bytes.subarray(this.at, end));
    this.at = end;
    return s;
  }

  skip(wire: number, limit = this.bytes.length): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.at += 8;
    else if (wire === 2) this.at = this.lengthEnd(limit);
    else if (wire === 5) this.at += 4;
    else throw invalid(`cannot decode remote-write body: unsupported protobuf wire type ${wire}`);
    if (this.at > limit) throw truncated();
  }
}

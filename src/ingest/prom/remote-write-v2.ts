/**
 * Prometheus remote-write 2.0: an uncompressed `io.prometheus.write.v2.Request`, read by hand like
 * 1.0 and into the same columns (metric -> measurement, labels -> tags, field `value`).
 *
 * 2.0 interns every string in one `symbols` table and names a series' labels by pairs of indices
 * into it. The table is per request (indices mean nothing across requests), so a series is
 * remembered by what 1.0 would have sent: its label pairs re-encoded as 1.0 Label fields into a
 * scratch buffer, looked up in the same process-wide SeriesTable as 1.0 (one series is one entry,
 * whichever version sent it). From there on it is 1.0's design: pass 1 records where each series'
 * Sample fields are (2.0's Sample message is 1.0's, at the same field number), pass 2 fills columns.
 *
 * What a TimeSeries carries besides samples:
 * - native histograms: each becomes one row of `<metric>_count` and one of `<metric>_sum` (what a
 *   classic histogram exposes); the buckets are not stored (svc has no histogram column type);
 * - exemplars and metadata (type, help, unit): not stored; their symbol references are checked;
 * - created_timestamp: read and not stored (see the README for why no zero sample is written).
 */
import { invalid } from '../../lib/errors.ts';
import type { ColumnBatch } from '../column-batch.ts';
import { BatchBuilder, KIND_FLOAT, KIND_STRING } from '../column-builder.ts';
import { addRecord, atLeast, beginRequest, finishRequest, isStaleMarker, Reader, SAMPLES_TAG, seriesGuessed, table, truncated, type RemoteWriteResult } from './remote-write-parser.ts';
import { uncompressSnappyScratch } from './snappy.ts';

/** What a 2.0 request wrote: 1.0's result plus the counts its response headers report. */
export interface RemoteWriteV2Result extends RemoteWriteResult {
  /** Native histogram samples accepted (stored as `_count` and `_sum` rows, or dropped as stale markers). */
  histograms: number;
  /** Exemplars received (none is stored). */
  exemplars: number;
}

/** Field tags of the Request and TimeSeries messages (field number << 3 | wire type). */
const SYMBOL_TAG = (4 << 3) | 2;
const SERIES_TAG = (5 << 3) | 2;
const REFS_PACKED_TAG = (1 << 3) | 2;
const REFS_ONE_TAG = (1 << 3) | 0;
const HISTOGRAM_TAG = (3 << 3) | 2;
const EXEMPLAR_TAG = (4 << 3) | 2;
const METADATA_TAG = (5 << 3) | 2;

/** Symbol i is the UTF-8 bytes [symStart[i], symEnd[i]) of the request. */
let symStart = new Int32Array(4096);
let symEnd = new Int32Array(4096);
/** TimeSeries j is the bytes [seriesStart[j], seriesEnd[j]). */
let seriesStart = new Int32Array(4096);
let seriesEnd = new Int32Array(4096);
/** The label refs of the series being read. */
let refs = new Int32Array(64);
/** A series' labels re-encoded as 1.0 Label fields: its key in the SeriesTable. */
let key = new Uint8Array(1024);

const badRef = (ref: number, symbols: number, series: number, what: string) =>
  invalid(`cannot decode remote-write 2.0 body: timeseries ${series} has ${what} symbol reference ${ref}, but the request has ${symbols} symbols`);

/** A request body as received (snappy block) into columns; see `decodeRemoteWrite` for the buffer reuse. */
export function decodeRemoteWriteV2(body: Uint8Array, maxBytes: number): RemoteWriteV2Result {
  return parseRemoteWriteV2(uncompressSnappyScratch(body, maxBytes));
}

/** Decodes an uncompressed v2 Request into columns, one batch per measurement. */
export function parseRemoteWriteV2(buf: Uint8Array): RemoteWriteV2Result {
  const request = beginRequest(buf);
  const r = request.reader;
  const n = buf.length;
  // Walk 1: where the symbols and the series are (a sender may put symbols after the series).
  let symbols = 0;
  let series = 0;
  while (r.at < n) {
    const tag = r.varint();
    if (tag !== SYMBOL_TAG && tag !== SERIES_TAG) {
      r.skip(tag & 7);
      continue;
    }
    const end = r.lengthEnd();
    if (tag === SYMBOL_TAG) {
      if (symbols >= symStart.length) {
        symStart = atLeast(symStart, symbols + 1);
        symEnd = atLeast(symEnd, symbols + 1);
      }
      symStart[symbols] = r.at;
      symEnd[symbols++] = end;
    } else {
      if (series >= seriesStart.length) {
        seriesStart = atLeast(seriesStart, series + 1);
        seriesEnd = atLeast(seriesEnd, series + 1);
      }
      seriesStart[series] = r.at;
      seriesEnd[series++] = end;
    }
    r.at = end;
  }

  let histogramSeries: number[] | null = null;
  let exemplars = 0;
  let previous = -1;
  for (let j = 0; j < series; j++) {
    const start = seriesStart[j]!;
    const end = seriesEnd[j]!;
    let refCount = 0;
    let samples = 0;
    let histograms = 0;
    let firstSample = start;
    r.at = start;
    while (r.at < end) {
      const fieldAt = r.at;
      const tag = r.varint();
      if (tag === SAMPLES_TAG) {
        r.at = r.lengthEnd(end);
        if (samples++ === 0) firstSample = fieldAt;
      } else if (tag === REFS_PACKED_TAG) {
        const fieldEnd = r.lengthEnd(end);
        while (r.at < fieldEnd) {
          if (refCount >= refs.length) refs = atLeast(refs, refCount + 1);
          refs[refCount++] = r.varint();
        }
        if (r.at > fieldEnd) throw truncated();
      } else if (tag === REFS_ONE_TAG) {
        if (refCount >= refs.length) refs = atLeast(refs, refCount + 1);
        refs[refCount++] = r.varint();
      } else if (tag === HISTOGRAM_TAG) {
        r.at = r.lengthEnd(end);
        histograms++;
      } else if (tag === EXEMPLAR_TAG) {
        checkExemplar(r, r.lengthEnd(end), symbols, j);
        exemplars++;
      } else if (tag === METADATA_TAG) checkMetadata(r, r.lengthEnd(end), symbols, j);
      else r.skip(tag & 7, end);
    }
    if (r.at > end) throw truncated();
    if (refCount % 2 !== 0) throw invalid(`cannot decode remote-write 2.0 body: timeseries ${j} has an odd number of label references (${refCount})`);
    const keyEnd = keyOf(buf, refCount, symbols, j);
    // A series without data (metadata alone) is checked but not looked up: it makes no rows.
    if (samples === 0 && histograms === 0) continue;
    const sid = seriesGuessed(previous, key, 0, keyEnd);
    previous = sid;
    // Pass 2 reads the series' Sample fields from the first on, and skips any other field among them.
    if (samples > 0) addRecord(request, sid, firstSample, end, samples);
    if (histograms > 0) (histogramSeries ??= []).push(sid, start, end);
  }

  const out: RemoteWriteV2Result = { ...finishRequest(request), histograms: 0, exemplars };
  if (histogramSeries) histogramRows(r, histogramSeries, out);
  return out;
}

/** Re-encodes the label refs of series `j` as 1.0 Label fields into `key`; returns the key's length. */
function keyOf(buf: Uint8Array, refCount: number, symbols: number, j: number): number {
  let at = 0;
  for (let i = 0; i < refCount; i += 2) {
    const name = refs[i]!;
    const value = refs[i + 1]!;
    if (name >= symbols) throw badRef(name, symbols, j, 'a label name');
    if (value >= symbols) throw badRef(value, symbols, j, 'a label value');
    const nameStart = symStart[name]!;
    const nameLength = symEnd[name]! - nameStart;
    const valueStart = symStart[value]!;
    const valueLength = symEnd[value]! - valueStart;
    const inner = 2 + varintSize(nameLength) + nameLength + varintSize(valueLength) + valueLength;
    const need = at + 1 + varintSize(inner) + inner;
    if (need > key.length) {
      const grown = new Uint8Array(Math.max(key.length * 2, need));
      grown.set(key.subarray(0, at));
      key = grown;
    }
    key[at++] = 0x0a; // Label field of a 1.0 TimeSeries
    at = putVarint(inner, at);
    key[at++] = 0x0a; // Label.name
    at = putVarint(nameLength, at);
    at = copy(buf, nameStart, nameLength, at);
    key[at++] = 0x12; // Label.value
    at = putVarint(valueLength, at);
    at = copy(buf, valueStart, valueLength, at);
  }
  return at;
}

/**
 * Copies `length` bytes of `buf` from `from` into `key` at `at`. Label strings are short: a byte loop
 * beats a subarray + set call below ~24 bytes (they were half of a request's parse time).
 */
function copy(buf: Uint8Array, from: number, length: number, at: number): number {
  if (length >= 24) key.set(buf.subarray(from, from + length), at);
  else for (let i = 0; i < length; i++) key[at + i] = buf[from + i]!;
  return at + length;
}

const varintSize = (v: number) => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);

function putVarint(v: number, at: number): number {
  while (v >= 0x80) {
    key[at++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  key[at++] = v;
  return at;
}

/** Metadata is not stored, but its help and unit references must name symbols like every other. */
function checkMetadata(r: Reader, end: number, symbols: number, j: number): void {
  while (r.at < end) {
    const tag = r.varint();
    if (tag === ((3 << 3) | 0) || tag === ((4 << 3) | 0)) {
      const ref = r.varint();
      if (ref >= symbols) throw badRef(ref, symbols, j, tag === 24 ? 'a metadata help' : 'a metadata unit');
    } else r.skip(tag & 7, end);
  }
  if (r.at > end) throw truncated();
}

/** Exemplars are not stored either, but their label references must name symbols. */
function checkExemplar(r: Reader, end: number, symbols: number, j: number): void {
  while (r.at < end) {
    const tag = r.varint();
    if (tag === REFS_ONE_TAG) {
      const ref = r.varint();
      if (ref >= symbols) throw badRef(ref, symbols, j, 'an exemplar label');
    } else if (tag === REFS_PACKED_TAG) {
      const fieldEnd = r.lengthEnd(end);
      while (r.at < fieldEnd) {
        const ref = r.varint();
        if (ref >= symbols) throw badRef(ref, symbols, j, 'an exemplar label');
      }
      if (r.at > fieldEnd) throw truncated();
    } else r.skip(tag & 7, end);
  }
  if (r.at > end) throw truncated();
}

/** Histogram field tags: count (integer or float), sum, timestamp. */
const COUNT_INT_TAG = (1 << 3) | 0;
const COUNT_FLOAT_TAG = (2 << 3) | 1;
const SUM_TAG = (3 << 3) | 1;
const HISTOGRAM_TIME_TAG = (15 << 3) | 0;

/**
 * The rare path: native histograms of `list` (sid, start, end triples) become rows of `<metric>_count`
 * and `<metric>_sum`. A histogram whose sum is the staleness marker is a stale marker and is dropped.
 */
function histogramRows(r: Reader, list: number[], out: RemoteWriteV2Result): void {
  const builders = new Map<string, BatchBuilder>();
  const row = (measurement: string, sid: number, ms: number, value: number) => {
    let b = builders.get(measurement);
    if (!b) builders.set(measurement, (b = new BatchBuilder(measurement, 16)));
    const first = table.seriesPairStart[sid]!;
    for (let k = 0; k < table.seriesPairCount[sid]!; k++) {
      const pair = table.pairList[first + k]!;
      const name = table.names[table.pairName[pair]!]!;
      (b.columns.get(name) ?? b.addColumn(name, KIND_STRING, true)).setString(b.len, table.pairValue[pair]!);
    }
    if (value === value) (b.columns.get('value') ?? b.addColumn('value', KIND_FLOAT, false)).setFloat(b.len, value);
    b.commitRow(ms * 1000);
  };
  const b = r.bytes;
  for (let i = 0; i < list.length; i += 3) {
    const sid = list[i]!;
    const end = list[i + 2]!;
    const metric = table.metrics[table.seriesMetric[sid]!]!;
    r.at = list[i + 1]!;
    while (r.at < end) {
      const tag = r.varint();
      if (tag !== HISTOGRAM_TAG) {
        r.skip(tag & 7, end);
        continue;
      }
      const hend = r.lengthEnd(end);
      let count = 0;
      let sum = 0;
      let stale = false;
      let ms = 0;
      while (r.at < hend) {
        const t = r.varint();
        if (t === COUNT_INT_TAG) count = r.varint();
        else if (t === COUNT_FLOAT_TAG || t === SUM_TAG) {
          if (r.at + 8 > hend) throw truncated();
          const v = new DataView(b.buffer, b.byteOffset + r.at, 8).getFloat64(0, true);
          if (t === SUM_TAG) {
            sum = v;
            stale = v !== v && isStaleMarker(b, r.at);
          } else count = v;
          r.at += 8;
        } else if (t === HISTOGRAM_TIME_TAG) ms = r.int64(hend);
        else r.skip(t & 7, hend);
      }
      if (r.at > hend) throw truncated();
      out.histograms++;
      if (stale) continue;
      row(`${metric}_count`, sid, ms, count);
      row(`${metric}_sum`, sid, ms, sum);
    }
  }
  for (const builder of builders.values()) {
    const batch: ColumnBatch = builder.finish();
    out.batches.push(batch);
  }
}

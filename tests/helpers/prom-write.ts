/**
 * Encodes Prometheus remote-write requests (1.0 WriteRequest and 2.0 io.prometheus.write.v2.Request,
 * protobuf in a snappy block) for tests and benchmarks, independently of the server's decoder.
 */
import snappy from 'snappyjs';

/** One series: labels (including __name__) and [value, timestamp ms] samples. */
export interface Series {
  labels: Record<string, string>;
  /** [value, ms]; `'stale'` is Prometheus' staleness marker (a NaN payload JS numbers cannot carry). */
  samples: [number | 'stale', number][];
}

class Writer {
  parts: number[] = [];
  varint(v: number | bigint): void {
    let x = BigInt.asUintN(64, BigInt(v));
    while (x >= 0x80n) {
      this.parts.push(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.parts.push(Number(x));
  }
  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }
  bytes(field: number, b: Uint8Array | number[]): void {
    this.tag(field, 2);
    this.varint(b.length);
    for (const x of b) this.parts.push(x);
  }
  double(field: number, v: number | 'stale'): void {
    this.tag(field, 1);
    const b = new Uint8Array(8);
    if (v === 'stale') new DataView(b.buffer).setBigUint64(0, 0x7ff0000000000002n, true);
    else new DataView(b.buffer).setFloat64(0, v, true);
    for (const x of b) this.parts.push(x);
  }
  raw(field: number, b: Uint8Array): void {
    this.bytes(field, b);
  }
  done(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

const enc = new TextEncoder();

/** A Sample message (the same in 1.0 and 2.0): value, then the timestamp in ms. */
function sampleMessage(value: number | 'stale', ms: number): Uint8Array {
  const sm = new Writer();
  sm.double(1, value);
  sm.tag(2, 0);
  sm.varint(ms);
  return sm.done();
}

/** The uncompressed protobuf of a WriteRequest. */
export function encodeWriteRequest(series: Series[]): Uint8Array {
  const req = new Writer();
  for (const s of series) {
    const ts = new Writer();
    for (const [name, value] of Object.entries(s.labels)) {
      const l = new Writer();
      l.bytes(1, enc.encode(name));
      l.bytes(2, enc.encode(value));
      ts.raw(1, l.done());
    }
    for (const [value, ms] of s.samples) ts.raw(2, sampleMessage(value, ms));
    req.raw(1, ts.done());
  }
  return req.done();
}

/** A snappy-compressed WriteRequest body, as Prometheus sends it. */
export function remoteWriteBody(series: Series[]): Uint8Array {
  return snappy.compress(encodeWriteRequest(series));
}

/** A 2.0 series: 1.0's labels and samples, plus what only 2.0 carries. */
export interface SeriesV2 extends Series {
  /** Native histograms: integer count (or float with `float`), sum, ms; a few buckets are encoded too. */
  histograms?: { count: number; sum: number | 'stale'; ms: number; float?: boolean }[];
  exemplars?: { labels: Record<string, string>; value: number; ms: number }[];
  metadata?: { type: number; help: string; unit: string };
  createdMs?: number;
}

/** How to lay out a 2.0 request: symbols after the series, label refs as unpacked varints. */
export interface V2Layout {
  symbolsLast?: boolean;
  unpackedRefs?: boolean;
}

const zigzag = (v: number) => (v < 0 ? -2 * v - 1 : 2 * v);

/** The uncompressed protobuf of a 2.0 Request; labels are sent sorted by name, strings interned. */
export function encodeRequestV2(series: SeriesV2[], layout: V2Layout = {}): Uint8Array {
  const symbols = [''];
  const index = new Map([['', 0]]);
  const ref = (s: string) => {
    let i = index.get(s);
    if (i === undefined) index.set(s, (i = symbols.push(s) - 1));
    return i;
  };
  const labelRefs = (labels: Record<string, string>) =>
    Object.entries(labels)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .flatMap(([n, v]) => [ref(n), ref(v)]);
  const body = new Writer();
  for (const s of series) {
    const ts = new Writer();
    const refs = labelRefs(s.labels);
    if (layout.unpackedRefs)
      for (const r of refs) {
        ts.tag(1, 0);
        ts.varint(r);
      }
    else {
      const packed = new Writer();
      for (const r of refs) packed.varint(r);
      ts.raw(1, packed.done());
    }
    for (const [value, ms] of s.samples) ts.raw(2, sampleMessage(value, ms));
    for (const h of s.histograms ?? []) {
      const hw = new Writer();
      if (h.float) hw.double(2, h.count);
      else {
        hw.tag(1, 0);
        hw.varint(h.count);
      }
      hw.double(3, h.sum);
      hw.tag(4, 0);
      hw.varint(zigzag(3)); // schema
      const span = new Writer();
      span.tag(1, 0);
      span.varint(zigzag(-2));
      span.tag(2, 0);
      span.varint(2);
      hw.raw(11, span.done());
      const deltas = new Writer();
      deltas.varint(zigzag(1));
      deltas.varint(zigzag(-1));
      hw.raw(12, deltas.done());
      hw.tag(15, 0);
      hw.varint(h.ms);
      ts.raw(3, hw.done());
    }
    for (const e of s.exemplars ?? []) {
      const ew = new Writer();
      const packed = new Writer();
      for (const r of labelRefs(e.labels)) packed.varint(r);
      ew.raw(1, packed.done());
      ew.double(2, e.value);
      ew.tag(3, 0);
      ew.varint(e.ms);
      ts.raw(4, ew.done());
    }
    if (s.metadata) {
      const mw = new Writer();
      mw.tag(1, 0);
      mw.varint(s.metadata.type);
      mw.tag(3, 0);
      mw.varint(ref(s.metadata.help));
      mw.tag(4, 0);
      mw.varint(ref(s.metadata.unit));
      ts.raw(5, mw.done());
    }
    if (s.createdMs !== undefined) {
      ts.tag(6, 0);
      ts.varint(s.createdMs);
    }
    body.raw(5, ts.done());
  }
  const syms = new Writer();
  for (const s of symbols) syms.bytes(4, enc.encode(s));
  const [first, second] = layout.symbolsLast ? [body.done(), syms.done()] : [syms.done(), body.done()];
  return Uint8Array.from([...first, ...second]);
}

/** A snappy-compressed 2.0 Request body. */
export function remoteWriteBodyV2(series: SeriesV2[], layout: V2Layout = {}): Uint8Array {
  return snappy.compress(encodeRequestV2(series, layout));
}

/** Headers a 2.0 sender sends. */
export const V2_HEADERS = {
  'content-type': 'application/x-protobuf;proto=io.prometheus.write.v2.Request',
  'content-encoding': 'snappy',
  'x-prometheus-remote-write-version': '2.0.0',
} as const;

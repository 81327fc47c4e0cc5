/**
 * Encodes Prometheus remote-write 1.0 requests (protobuf WriteRequest, snappy block) for tests and
 * benchmarks, independently of the server's decoder.
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
    for (const [value, ms] of s.samples) {
      const sm = new Writer();
      sm.double(1, value);
      sm.tag(2, 0);
      sm.varint(ms);
      ts.raw(2, sm.done());
    }
    req.raw(1, ts.done());
  }
  return req.done();
}

/** A snappy-compressed WriteRequest body, as Prometheus sends it. */
export function remoteWriteBody(series: Series[]): Uint8Array {
  return snappy.compress(encodeWriteRequest(series));
}

/**
 * Prometheus remote-write 1.0: a snappy-compressed (block format) protobuf WriteRequest, decoded
 * by hand (the schema is three small messages) straight into one ColumnBatch per metric name:
 * labels become tag columns, each sample a row with field `value` at its millisecond timestamp.
 * Staleness markers are dropped; other NaNs are stored as NULL (Parquet statistics stay usable).
 */
import snappy from 'snappyjs';
import { invalid, tooLarge } from '../../lib/errors.ts';
import type { ColumnBatch } from '../column-batch.ts';
import { BatchBuilder, KIND_FLOAT, KIND_STRING, type ColumnBuilder } from '../column-builder.ts';

/** The parse result: batches and what was dropped. */
export interface RemoteWriteResult {
  batches: ColumnBatch[];
  samples: number;
  staleDropped: number;
}

/** Labels that would collide with svc's own columns are stored under this prefix. */
const RESERVED = new Set(['time', 'value']);

const utf8 = new TextDecoder();

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

/** Decodes an uncompressed WriteRequest into columns. */
export function parseRemoteWrite(buf: Uint8Array): RemoteWriteResult {
  const r = new ProtoReader(buf);
  const builders = new Map<string, BatchBuilder>();
  const out: RemoteWriteResult = { batches: [], samples: 0, staleDropped: 0 };
  const labels: [string, string][] = [];
  while (!r.done()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === 2) {
      const end = r.lengthEnd();
      labels.length = 0;
      let metric = '';
      const samplesAt: [number, number][] = [];
      while (r.at < end) {
        const [f, w] = r.tag();
        if (f === 1 && w === 2) {
          const lend = r.lengthEnd();
          let name = '';
          let value = '';
          while (r.at < lend) {
            const [lf, lw] = r.tag();
            if (lf === 1 && lw === 2) name = r.string();
            else if (lf === 2 && lw === 2) value = r.string();
            else r.skip(lw);
          }
          if (name === '__name__') metric = value;
          else labels.push([name, value]);
        } else if (f === 2 && w === 2) {
          // Samples are read after the labels, which may come later in the series.
          const send = r.lengthEnd();
          samplesAt.push([r.at, send]);
          r.at = send;
        } else r.skip(w);
      }
      if (!metric) throw invalid('cannot accept remote-write series without a __name__ label');
      const measurement = metric.replace(/:/g, '_');
      let b = builders.get(measurement);
      if (!b) builders.set(measurement, (b = new BatchBuilder(measurement, 256)));
      const tagCols: [ColumnBuilder, string][] = labels.map(([name, value]) => {
        const col = RESERVED.has(name) ? `label_${name}` : name;
        return [b!.columns.get(col) ?? b!.addColumn(col, KIND_STRING, true), value];
      });
      const valueCol = b.columns.get('value') ?? b.addColumn('value', KIND_FLOAT, false);
      for (const [start, send] of samplesAt) {
        r.at = start;
        let value = 0;
        let stale = false;
        let ms = 0;
        while (r.at < send) {
          const [sf, sw] = r.tag();
          if (sf === 1 && sw === 1) {
            stale = r.isStaleMarker();
            value = r.double();
          } else if (sf === 2 && sw === 0) ms = r.int64();
          else r.skip(sw);
        }
        if (stale) {
          out.staleDropped++;
          continue;
        }
        const row = b.len;
        for (const [col, v] of tagCols) col.setString(row, v);
        if (!Number.isNaN(value)) valueCol.setFloat(row, value);
        b.commitRow(ms * 1000);
        out.samples++;
      }
      r.at = end;
    } else r.skip(wire);
  }
  for (const b of builders.values()) if (b.len > 0) out.batches.push(b.finish());
  return out;
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
  tag(): [number, number] {
    const t = this.varint();
    return [Math.floor(t / 8), t & 7];
  }
  lengthEnd(): number {
    const len = this.varint();
    const end = this.at + len;
    if (end > this.b.length) throw invalid('cannot decode remote-write body: field runs past the end');
    return end;
  }
  string(): string {
    const end = this.lengthEnd();
    const s = utf8.decode(this.b.subarray(this.at, end));
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

/**
 * Arrow IPC stream framing written by hand so record batch bodies can be emitted as lists of
 * existing byte ranges (DuckDB vector memory) instead of being assembled and copied by
 * apache-arrow's writer. The schema message still comes from apache-arrow (type encoding is the
 * intricate part and runs once per query); record batch metadata is a fixed flatbuffer layout.
 */
import { Schema, Table, tableToIPC } from 'apache-arrow';

/** One field node of a record batch: its rows and nulls. */
export interface FieldNode {
  length: number;
  nullCount: number;
}

/** One column's share of a record batch: its node, and its buffers each as consecutive parts. */
export interface ColumnBody {
  node: FieldNode;
  /** In IPC order (validity, then offsets/data); each buffer is the concatenation of its parts. */
  buffers: Uint8Array[][];
}

const CONTINUATION = 0xffffffff;
const PAD = new Uint8Array(8);

/** The encapsulated schema message for `schema` (no dictionaries), taken from apache-arrow's writer. */
export function schemaMessage(schema: Schema): Uint8Array {
  const ipc = tableToIPC(new Table(schema), 'stream');
  const view = new DataView(ipc.buffer, ipc.byteOffset, ipc.byteLength);
  // The stream starts with 0xFFFFFFFF, the metadata length, the metadata; a schema has no body.
  return ipc.slice(0, 8 + view.getInt32(4, true));
}

/** The end-of-stream marker. */
export function endOfStream(): Uint8Array {
  return new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
}

/**
 * One encapsulated record batch message as parts (metadata, then body parts with 8-byte padding
 * after each buffer): nothing in the body is copied.
 */
export function recordBatchMessage(length: number, columns: readonly ColumnBody[]): Uint8Array[] {
  const nodes = columns.map((c) => c.node);
  const sizes = columns.flatMap((c) => c.buffers.map((parts) => parts.reduce((n, p) => n + p.byteLength, 0)));
  const body: Uint8Array[] = [];
  const offsets: number[] = [];
  let at = 0;
  let b = 0;
  for (const c of columns)
    for (const parts of c.buffers) {
      offsets.push(at);
      for (const p of parts) if (p.byteLength > 0) body.push(p);
      const size = sizes[b++]!;
      const pad = (8 - (size % 8)) % 8;
      if (pad) body.push(PAD.subarray(0, pad));
      at += size + pad;
    }
  return [recordBatchMetadata(length, nodes, offsets, sizes, at), ...body];
}

/**
 * Message{version V5, header_type RecordBatch, header, bodyLength} -> RecordBatch{length, nodes,
 * buffers} in one flatbuffer with fixed positions (vtables first, then tables, then the two struct
 * vectors at 8-byte aligned element starts), prefixed by the continuation marker and its length.
 */
function recordBatchMetadata(length: number, nodes: readonly FieldNode[], offsets: readonly number[], sizes: readonly number[], bodyLength: number): Uint8Array {
  const n = nodes.length;
  const m = sizes.length;
  const metaLen = 88 + 16 * n + 16 * m; // a multiple of 8, so the body starts 8-byte aligned
  const out = new Uint8Array(8 + metaLen);
  const v = new DataView(out.buffer);
  v.setUint32(0, CONTINUATION, true);
  v.setInt32(4, metaLen, true);
  const B = 8; // flatbuffer positions below are relative to B
  const u16 = (p: number, x: number) => v.setUint16(B + p, x, true);
  const i32 = (p: number, x: number) => v.setInt32(B + p, x, true);
  const i64 = (p: number, x: number) => v.setBigInt64(B + p, BigInt(x), true);
  i32(0, 32); // root: Message table at 32
  // Message vtable at 4: 4 fields, table of 20 bytes.
  u16(4, 12), u16(6, 20), u16(8, 16), u16(10, 18), u16(12, 4), u16(14, 8);
  // RecordBatch vtable at 16: 3 fields (length, nodes, buffers), table of 20 bytes.
  u16(16, 10), u16(18, 20), u16(20, 8), u16(22, 4), u16(24, 16);
  // Message table at 32.
  i32(32, 32 - 4);
  i32(36, 56 - 36); // header -> RecordBatch table
  i64(40, bodyLength);
  u16(48, 4); // MetadataVersion.V5
  out[B + 50] = 3; // MessageHeader.RecordBatch
  // RecordBatch table at 56.
  i32(56, 56 - 16);
  i32(60, 76 - 60); // nodes vector at 76
  i64(64, length);
  const buffersAt = 84 + 16 * n;
  i32(72, buffersAt - 72);
  i32(76, n);
  nodes.forEach((x, i) => (i64(80 + 16 * i, x.length), i64(88 + 16 * i, x.nullCount)));
  i32(buffersAt, m);
  for (let i = 0; i < m; i++) i64(buffersAt + 4 + 16 * i, offsets[i]!), i64(buffersAt + 12 + 16 * i, sizes[i]!);
  return out;
}

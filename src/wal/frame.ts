/**
 * On-disk framing of a WAL segment: an 8-byte file header, then entries of
 * `u32 magic | u32 body length | u32 CRC32(body) | body`. A body's first byte is its kind: a data
 * entry (one encoded write) or a release record (entries whose rows are now in Parquet files).
 * The magic lets a reader find the next entry after a damaged one instead of giving up on the file.
 */
import type { ColumnBatch } from '../ingest/index.ts';
import { encodeBatches } from './batch-codec.ts';

/** Bytes at the start of every segment file: "SVCWAL", then a u16 format version (1). */
export const FILE_HEADER = new Uint8Array([0x53, 0x56, 0x43, 0x57, 0x41, 0x4c, 0x01, 0x00]);
/** Bytes before an entry's body. */
export const FRAME_HEADER = 12;
const MAGIC = 0x4c4157e7; // bytes e7 57 41 4c ("\xe7WAL") in little-endian order
export const KIND_DATA = 1;
export const KIND_RELEASE = 2;

/** Where an entry lives: its segment's sequence number and the byte offset of its frame. */
export interface EntryId {
  segment: number;
  offset: number;
}

/** One write framed as a data entry, ready to append with a single write. */
export function frameData(database: string, batches: readonly ColumnBatch[]): Uint8Array {
  const bytes = encodeBatches(database, batches, FRAME_HEADER + 1);
  bytes[FRAME_HEADER] = KIND_DATA;
  return seal(bytes);
}

/** A release record naming entries whose rows are flushed, so replay skips them. */
export function frameRelease(ids: readonly EntryId[]): Uint8Array {
  const bytes = new Uint8Array(FRAME_HEADER + 1 + 4 + ids.length * 16);
  const view = new DataView(bytes.buffer);
  bytes[FRAME_HEADER] = KIND_RELEASE;
  view.setUint32(FRAME_HEADER + 1, ids.length, true);
  let at = FRAME_HEADER + 5;
  for (const id of ids) {
    view.setFloat64(at, id.segment, true);
    view.setFloat64(at + 8, id.offset, true);
    at += 16;
  }
  return seal(bytes);
}

/** Reads the entry ids of a release record's body. */
export function readRelease(body: Uint8Array): EntryId[] {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const n = view.getUint32(1, true);
  if (5 + n * 16 !== body.length) throw new Error(`release record of ${body.length} bytes cannot hold ${n} ids`);
  const ids: EntryId[] = [];
  for (let i = 0, at = 5; i < n; i++, at += 16) ids.push({ segment: view.getFloat64(at, true), offset: view.getFloat64(at + 8, true) });
  return ids;
}

/** Fills in magic, length and CRC of a frame whose body starts at FRAME_HEADER. */
function seal(bytes: Uint8Array): Uint8Array {
  const body = bytes.subarray(FRAME_HEADER);
  if (body.length > 0xffffffff) throw new Error(`cannot frame a WAL entry of ${body.length} bytes: the limit is 4 GiB`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, FRAME_HEADER);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, body.length, true);
  view.setUint32(8, Bun.hash.crc32(body), true);
  return bytes;
}

/** A good entry found by scanFrames. */
export interface Frame {
  offset: number;
  kind: number;
  /** The whole body, kind byte included; a view into the scanned buffer. */
  body: Uint8Array;
}

/** What a scan found besides good entries. */
export interface ScanReport {
  /** False when the file does not start with FILE_HEADER (a foreign or damaged file). */
  headerOk: boolean;
  /** Damaged stretches skipped: a bad CRC, a torn tail, garbage between entries. Each counts once. */
  dropped: number;
}

/**
 * Yields every intact entry of a segment file's bytes in order. A damaged entry is skipped: the scan
 * resumes at the next position holding a complete entry with a valid CRC, so one bad entry in the
 * middle loses only itself, and a torn tail (a short final write) is dropped. Never throws.
 */
export function* scanFrames(buf: Uint8Array, report: ScanReport): Generator<Frame> {
  report.headerOk = buf.length >= FILE_HEADER.length && FILE_HEADER.every((b, i) => buf[i] === b);
  if (!report.headerOk) {
    if (buf.length > 0) report.dropped++;
    return;
  }
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let pos = FILE_HEADER.length;
  while (pos < buf.length) {
    const frame = frameAt(buf, view, pos);
    if (frame) {
      yield frame;
      pos = frame.offset + FRAME_HEADER + frame.body.length;
      continue;
    }
    report.dropped++;
    pos = nextFrame(buf, view, pos + 1);
  }
}

/** The intact entry at `pos`, or null. */
function frameAt(buf: Uint8Array, view: DataView, pos: number): Frame | null {
  if (pos + FRAME_HEADER > buf.length || view.getUint32(pos, true) !== MAGIC) return null;
  const len = view.getUint32(pos + 4, true);
  const end = pos + FRAME_HEADER + len;
  if (len === 0 || end > buf.length) return null;
  const body = buf.subarray(pos + FRAME_HEADER, end);
  if (Bun.hash.crc32(body) !== view.getUint32(pos + 8, true)) return null;
  return { offset: pos, kind: body[0]!, body };
}

/** Position of the next intact entry at or after `from`, or the end of the buffer. */
function nextFrame(buf: Uint8Array, view: DataView, from: number): number {
  const first = MAGIC & 0xff;
  for (let at = buf.indexOf(first, from); at !== -1; at = buf.indexOf(first, at + 1)) {
    if (frameAt(buf, view, at)) return at;
  }
  return buf.length;
}

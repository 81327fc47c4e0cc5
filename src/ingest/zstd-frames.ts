/**
 * Structural check of a zstd stream (RFC 8878): every frame header and block header is walked
 * without decompressing, so a truncated or padded body is caught before inflation.
 */

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
const DICT_ID_BYTES = [0, 1, 2, 4];
const FCS_BYTES = [0, 2, 4, 8];

/** Why `bytes` is not a complete sequence of zstd frames (the magic-byte caller checked the first), or null. */
export function zstdFramesProblem(bytes: Uint8Array): string | null {
  let pos = 0;
  while (pos < bytes.length) {
    if (pos + 4 > bytes.length) return `truncated frame magic at byte ${pos}`;
    const magic = readU32(bytes, pos);
    pos += 4;
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      if (pos + 4 > bytes.length) return `truncated skippable frame at byte ${pos}`;
      pos += 4 + readU32(bytes, pos);
      if (pos > bytes.length) return 'truncated skippable frame';
      continue;
    }
    if (magic !== ZSTD_MAGIC) return `unexpected bytes after the last frame at byte ${pos - 4}`;
    const end = frameEnd(bytes, pos);
    if (typeof end === 'string') return end;
    pos = end;
  }
  return null;
}

/** Position just past the frame whose header starts at `pos` (after the magic), or the reason it is broken. */
function frameEnd(bytes: Uint8Array, pos: number): number | string {
  if (pos >= bytes.length) return 'truncated frame header';
  const fhd = bytes[pos++];
  if (fhd & 0x08) return 'reserved bit set in frame header';
  const singleSegment = (fhd & 0x20) !== 0;
  const fcsFlag = fhd >> 6;
  const fcsBytes = fcsFlag === 0 && singleSegment ? 1 : FCS_BYTES[fcsFlag];
  pos += (singleSegment ? 0 : 1) + DICT_ID_BYTES[fhd & 0x03] + fcsBytes;
  const checksum = (fhd & 0x04) !== 0;
  for (;;) {
    if (pos + 3 > bytes.length) return 'truncated block header (the body was cut off)';
    const header = bytes[pos] | (bytes[pos + 1] << 8) | (bytes[pos + 2] << 16);
    pos += 3;
    const last = (header & 1) !== 0;
    const type = (header >> 1) & 3;
    const size = header >>> 3;
    if (type === 3) return 'reserved block type';
    pos += type === 1 ? 1 : size; // an RLE block stores one byte repeated `size` times
    if (pos > bytes.length) return 'truncated block (the body was cut off)';
    if (last) break;
  }
  if (checksum) pos += 4;
  if (pos > bytes.length) return 'truncated checksum (the body was cut off)';
  return pos;
}

function readU32(bytes: Uint8Array, pos: number): number {
  return (bytes[pos] | (bytes[pos + 1] << 8) | (bytes[pos + 2] << 16) | (bytes[pos + 3] << 24)) >>> 0;
}

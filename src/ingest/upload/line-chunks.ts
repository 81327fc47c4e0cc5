/**
 * A spooled file read back in pieces that end at a line break, so text parsers (line protocol, TLE)
 * work on a bounded window of the file while still reporting absolute line numbers.
 */
import { open } from 'node:fs/promises';

/** One piece of the file: whole lines, and the 1-based number of its first line. */
export interface LineChunk {
  bytes: Uint8Array;
  firstLine: number;
}

const NL = 10;

/** Counts '\n' bytes. */
function newlines(bytes: Uint8Array): number {
  let n = 0;
  for (let at = bytes.indexOf(NL); at >= 0; at = bytes.indexOf(NL, at + 1)) n++;
  return n;
}

/** Yields the file at `path` in pieces of about `chunkBytes` (longer when a single line is longer). */
export async function* lineChunks(path: string, chunkBytes = 8 << 20): AsyncGenerator<LineChunk> {
  const file = await open(path, 'r');
  try {
    let carry: Uint8Array = new Uint8Array(0);
    let firstLine = 1;
    for (;;) {
      const buf = new Uint8Array(carry.length + chunkBytes);
      buf.set(carry);
      const { bytesRead } = await file.read(buf, carry.length, chunkBytes, null);
      const filled = buf.subarray(0, carry.length + bytesRead);
      if (bytesRead === 0) {
        if (filled.length > 0) yield { bytes: filled, firstLine };
        return;
      }
      const cut = filled.lastIndexOf(NL) + 1;
      if (cut === 0) {
        carry = filled;
        continue;
      }
      const piece = filled.subarray(0, cut);
      yield { bytes: piece, firstLine };
      firstLine += newlines(piece);
      carry = filled.slice(cut);
    }
  } finally {
    await file.close();
  }
}

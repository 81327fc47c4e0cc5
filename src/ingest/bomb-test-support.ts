/** Test and bench support for decompress.ts: decompression bombs that show whether the inflater stopped at the cap. */
import { constants, gzipSync, zstdCompressSync } from 'node:zlib';

const withChecksum = { params: { [constants.ZSTD_c_checksumFlag]: 1 } };

/**
 * A `format` body that inflates to 64 MiB of zeros and then holds a corrupt member (gzip) or frame
 * whose checksum is wrong (zstd): an inflater that stops at a smaller cap answers "too large", one
 * that inflates it all reaches the corruption and answers "invalid".
 */
export function bombWithCorruptTail(format: 'gzip' | 'zstd'): Uint8Array {
  const zeros = new Uint8Array(64 << 20);
  const small = new Uint8Array(1000).fill(7);
  if (format === 'gzip') {
    const tail = Buffer.from(gzipSync(small));
    tail[12]! ^= 0xff; // inside the deflate stream
    tail[13]! ^= 0xff;
    return Buffer.concat([gzipSync(zeros, { level: 9 }), tail]);
  }
  const tail = Buffer.from(zstdCompressSync(small, withChecksum));
  tail[tail.length - 1]! ^= 0xff; // the content checksum: the frame's structure stays whole
  return Buffer.concat([zstdCompressSync(zeros, withChecksum), tail]);
}

/**
 * Request-body decompression by magic bytes, capped at a byte limit so a small compressed body
 * cannot inflate into gigabytes of memory (a decompression bomb).
 */
import { constants as bufferConstants } from 'node:buffer';
import { Readable } from 'node:stream';
import { createGunzip, createZstdDecompress, gunzipSync, zstdDecompressSync } from 'node:zlib';
import { AppError, invalid, messageOf, tooLarge } from '../lib/errors.ts';
import { zstdFramesProblem } from './zstd-frames.ts';

/** Compression formats recognised by their first bytes. */
export type Compression = 'gzip' | 'zstd' | 'none';

/** Which compression `body` uses, judged by its magic bytes only (Content-Encoding is not trusted). */
export function detectCompression(body: Uint8Array): Compression {
  if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) return 'gzip';
  if (body.length >= 4 && body[0] === 0x28 && body[1] === 0xb5 && body[2] === 0x2f && body[3] === 0xfd) return 'zstd';
  return 'none';
}

/**
 * The decompressed bytes of a gzip or zstd body; any other body is returned as is.
 * Throws AppError 'too_large' as soon as the output would pass `maxBytes` (the native inflaters
 * stop at the cap instead of producing everything first) and AppError 'invalid' on corrupt input.
 */
export function decompress(body: Uint8Array, maxBytes: number): Uint8Array {
  const kind = detectCompression(body);
  if (kind === 'none') return body;
  // zlib rejects a cap of 0 or above its maximum buffer size; beyond that size nothing could be allocated anyway.
  const cap = Math.max(1, Math.min(Math.floor(maxBytes), bufferConstants.MAX_LENGTH));
  if (kind === 'zstd') {
    // The native zstd inflater accepts a truncated frame as a shorter body; walking the frame
    // structure first turns a cut-off upload into an error instead of silently lost rows.
    const problem = zstdFramesProblem(body);
    if (problem !== null) throw invalid(`cannot decompress zstd request body: ${problem}`);
  }
  let out: Uint8Array;
  try {
    out = kind === 'gzip' ? gunzipSync(body, { maxOutputLength: cap }) : zstdDecompressSync(body, { maxOutputLength: cap });
  } catch (err) {
    throw decompressError(kind, err, maxBytes);
  }
  if (out.length > maxBytes) throw tooLarge(`cannot decompress ${kind} request body: it inflates to more than ${maxBytes} bytes`);
  return out;
}

/** Maps a zlib failure to the AppError a client can act on. */
function decompressError(kind: Compression, err: unknown, maxBytes: number): AppError {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ERR_BUFFER_TOO_LARGE') {
    return tooLarge(`cannot decompress ${kind} request body: it inflates to more than ${maxBytes} bytes`);
  }
  const cause = err instanceof Error ? err.message : String(err);
  return invalid(`cannot decompress ${kind} request body: ${cause}`);
}

/**
 * Decompressed chunks of a gzip or zstd stream, produced only as fast as the caller takes them (the
 * inflater pauses while its small output buffer is full); other streams pass through. A caller that
 * stops iterating (a size cap reached) destroys the inflater, so nothing is inflated past that point.
 * Corrupt input throws AppError 'invalid' naming `what`.
 */
export async function* inflateStream(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, compression: Compression, what = 'request body'): AsyncGenerator<Uint8Array> {
  if (compression === 'none') return yield* source;
  const inflater = compression === 'gzip' ? createGunzip() : createZstdDecompress();
  const input = Readable.from(source, { objectMode: false });
  input.on('error', (err) => inflater.destroy(err));
  input.pipe(inflater);
  try {
    for await (const chunk of inflater) yield chunk as Uint8Array;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw invalid(`cannot decompress ${compression} ${what}: ${messageOf(err)}`);
  } finally {
    inflater.destroy();
    input.destroy();
  }
}

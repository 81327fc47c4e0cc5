/**
 * An upload on its way to a local file: the request stream (or one multipart part of it) is
 * decompressed by its magic bytes and written to disk chunk by chunk, counting bytes against a cap.
 * Imports read that file afterwards (DuckDB's readers need a file; parsers read it in chunks).
 */
import { rm } from 'node:fs/promises';
import { tooLarge } from '../../lib/errors.ts';
import { formatSize } from '../../lib/sizes.ts';
import { detectCompression, inflateStream, type Compression } from '../decompress.ts';
import { multipartPart } from './multipart.ts';

/** Where the upload comes from and how much of it is allowed. */
export interface SpoolOptions {
  /** Limit on the bytes received and, separately, on the bytes after decompression. */
  maxBytes: number;
  /** Multipart bodies: the boundary and the field whose content is the file. */
  multipart?: { boundary: string; field: string } | null;
}

/** What was written: decompressed size, bytes received, and the compression found. */
export interface SpoolResult {
  bytes: number;
  received: number;
  compression: Compression;
}

/** Writes `body` to `path` (see the file comment); on any failure the partial file is removed. */
export async function spoolToFile(body: ReadableStream<Uint8Array> | null, path: string, opts: SpoolOptions): Promise<SpoolResult> {
  const counter = { received: 0 };
  const writer = Bun.file(path).writer({ highWaterMark: 1 << 20 });
  let bytes = 0;
  let compression: Compression = 'none';
  try {
    let source: AsyncIterable<Uint8Array> = counted(body, counter, opts.maxBytes);
    if (opts.multipart) source = multipartPart(source, opts.multipart.boundary, opts.multipart.field);
    const peeked = await peek(source);
    compression = peeked.first ? detectCompression(peeked.first) : 'none';
    for await (const chunk of inflateStream(peeked.rest, compression, 'upload')) {
      bytes += chunk.byteLength;
      if (bytes > opts.maxBytes) throw tooLarge(`cannot accept upload: it inflates to more than ${formatSize(opts.maxBytes)}`);
      writer.write(chunk);
      // Backpressure: let the file catch up instead of queueing the whole upload in memory.
      if (bytes % (8 << 20) < chunk.byteLength) await writer.flush();
    }
    await writer.end();
    return { bytes, received: counter.received, compression };
  } catch (err) {
    await Promise.resolve(writer.end()).catch(() => undefined);
    await rm(path, { force: true });
    throw err;
  }
}

/** The request stream's chunks, failing with 413 once more than `max` bytes arrived. */
async function* counted(body: ReadableStream<Uint8Array> | null, counter: { received: number }, max: number): AsyncGenerator<Uint8Array> {
  if (!body) return;
  for await (const chunk of body) {
    counter.received += chunk.byteLength;
    if (counter.received > max) throw tooLarge(`cannot accept upload: the body is larger than ${formatSize(max)}`);
    yield chunk;
  }
}

/** The first non-empty chunk (to sniff magic bytes) and an iterable that still yields everything. */
async function peek(source: AsyncIterable<Uint8Array>): Promise<{ first: Uint8Array | null; rest: AsyncIterable<Uint8Array> }> {
  const it = source[Symbol.asyncIterator]();
  let first: Uint8Array | null = null;
  const head: Uint8Array[] = [];
  // Magic bytes need 4 bytes; tiny first chunks are gathered until there are enough.
  while (first === null || first.byteLength < 4) {
    const next = await it.next();
    if (next.done) break;
    head.push(next.value);
    first = head.length === 1 ? next.value : Buffer.concat(head);
  }
  async function* rest(): AsyncGenerator<Uint8Array> {
    if (first) yield first;
    for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
  }
  return { first, rest: rest() };
}


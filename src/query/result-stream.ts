/**
 * Query results as response bodies. A large result streams: the encoder hands over each batch's bytes
 * as soon as they are written, so encoding (this thread and the JSON workers) and sending overlap, and
 * the body is never held whole. A small one is sent whole, with its length.
 *
 * The promise settles once the query has run and the body is handed over: every engine error, timeout
 * and encoding error up to then is an ordinary error response. An error after the first streamed byte
 * (a client gone, a later batch that cannot be encoded) errors the body, which makes the server end
 * the response without its final chunk: HTTP clients report an incomplete body.
 */
import { AppError } from '../lib/errors.ts';
import type { ChunkEncoder, QueryProfile } from './execution.ts';
import type { ResultColumn } from './encode/result.ts';
import type { QueryRequest, QueryService } from './query-service.ts';

/**
 * Hands encoded bytes to the response, in order. `sent`, when given, is called once the parts have
 * left for the socket, after which the encoder may write into their memory again; it is never
 * called when the body is sent whole (a Blob keeps its parts) or collected.
 */
export type Emit = (parts: Uint8Array[], sent?: () => void) => void;

/** What an encoder learns only at the end. */
export interface ResultMeta {
  executionTimeMs: number;
  profile: QueryProfile;
  /** The result was cut at the caller's max_rows_per_query. */
  rowsCapped: boolean;
}

/** A response body and what its headers must say. */
export interface QueryBody {
  body: ReadableStream<Uint8Array> | Blob;
  /** Known before the first byte: the result was cut at max_rows_per_query (x-svc-rows-capped). */
  rowsCapped: boolean;
}

/** Writes its body through `emit` as chunks arrive (the opening bytes from its constructor). */
export interface StreamEncoder extends ChunkEncoder {
  /** Writes everything still pending and the closing bytes. */
  end(meta: ResultMeta): void | Promise<void>;
}

/**
 * Bytes queued for the socket before encoding pauses: enough to keep the socket busy, not the whole
 * result. Less queued means the next batches reuse memory still warm: an Arrow result of 1M rows
 * (70 MB) took 95 ms with 1-2 MB queued, 106 ms with 4 MB, 110 ms with 8 MB and 161 ms with 64 MB.
 */
const HIGH_WATER_BYTES = 2 << 20;

const DISCONNECTED = 'query cancelled: the client disconnected';

/** A result this small is sent whole (with its length) instead of streamed: a stream costs ~0.8 ms per response. */
const STREAM_AFTER_BYTES = 256 << 10;

/** How the body will be read. */
export interface StreamOptions {
  /**
   * The body goes straight to Bun's HTTP server, whose sink writes (or copies) each part before it
   * dequeues the next: a streamed part's memory may then be reused once later bytes have left the queue.
   * Any other reader must leave this off: Bun's own readers (`Response.json()`, `text()`, as the memory
   * service's in-process fetch uses) take every queued part at once but read them later, and reused
   * memory rewrote bytes they had not read yet (corrupt JSON from ~50k rows).
   */
  recycleSentParts?: boolean;
}

/**
 * Runs `req` and resolves with its body: the whole body when the result ends within STREAM_AFTER_BYTES,
 * else a stream, as soon as that much is encoded.
 */
export function streamQuery(
  queries: QueryService,
  req: QueryRequest,
  makeEncoder: (columns: ResultColumn[], emit: Emit) => StreamEncoder,
  options: StreamOptions = {},
): Promise<QueryBody> {
  const started = performance.now();
  const gone = new AbortController();
  let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  let wake: (() => void) | null = null;
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  /** Bytes enqueued so far, and the `sent` callbacks waiting, each with the enqueued total after its parts. */
  let enqueued = 0;
  let waiting: { end: number; sent: () => void }[] = [];
  // The stream's consumer (Bun's response sink) dequeues a part and writes it (to the socket, or
  // copied into its own buffer) before it reads the next one: once bytes past a part's end have left
  // the queue, that part's memory is free again.
  const recycle = () => {
    if (!controller || waiting.length === 0) return;
    const consumed = enqueued - Math.max(0, HIGH_WATER_BYTES - (controller.desiredSize ?? HIGH_WATER_BYTES));
    while (waiting.length > 0 && consumed > waiting[0]!.end) waiting.shift()!.sent();
  };
  const openStream = () =>
    new ReadableStream<Uint8Array>(
      {
        start: (c) => void (controller = c),
        pull: () => {
          recycle();
          wake?.();
        },
        // The client went away mid-body: interrupt the query like a request abort would.
        cancel: () => {
          gone.abort();
          wake?.();
        },
      },
      { highWaterMark: HIGH_WATER_BYTES, size: (p) => p?.byteLength ?? 0 },
    );
  const emit: Emit = (parts, sent) => {
    for (const p of parts) {
      if (p.byteLength === 0) continue;
      if (controller) (controller.enqueue(p), (enqueued += p.byteLength));
      else (held.push(p), (heldBytes += p.byteLength));
    }
    // Parts held for a whole body stay with it: their memory is never handed back. Streamed parts are
    // handed back only to a reader that is known to be done with them (see StreamOptions).
    if (sent && controller && options.recycleSentParts) waiting.push({ end: enqueued, sent });
  };
  const signal = req.signal ? AbortSignal.any([req.signal, gone.signal]) : gone.signal;
  return new Promise((resolve, reject) => {
    // Until the body is handed over, an error (an Arrow value that does not fit, a failing query) is
    // still an ordinary error response.
    let sending = false;
    queries
      .execute({ ...req, signal }, async (columns, next, profile, info) => {
        const encoder = makeEncoder(columns, emit);
        for (let chunk = await next(); chunk; chunk = await next()) {
          recycle();
          await encoder.add(chunk);
          if (!sending && heldBytes >= STREAM_AFTER_BYTES) {
            const body = openStream();
            sending = true;
            emit(held);
            held = [];
            resolve({ body, rowsCapped: info.rowsCapped });
          }
          while (controller && (controller.desiredSize ?? 0) <= 0 && !gone.signal.aborted) await new Promise<void>((r) => (wake = r));
          if (gone.signal.aborted) throw new AppError('invalid', DISCONNECTED);
        }
        await encoder.end({ executionTimeMs: Math.round((performance.now() - started) * 1000) / 1000, profile: profile(), rowsCapped: info.rowsCapped });
        if (controller) (controller as ReadableStreamDefaultController<Uint8Array>).close();
        else {
          sending = true;
          resolve({ body: new Blob(held as Uint8Array<ArrayBuffer>[]), rowsCapped: info.rowsCapped });
        }
        return encoder;
      })
      .catch((err: unknown) => {
        if (!sending) return reject(err);
        try {
          controller?.error(err);
        } catch {
          // Already cancelled by the client: nothing left to tell.
        }
      });
  });
}

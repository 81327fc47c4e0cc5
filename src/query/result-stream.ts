/**
 * Query results as response bodies. A result whose body fits the server's whole-body budget
 * (whole-body.ts, `query.whole_body_memory`) is encoded in full and sent whole, with its length: Bun's
 * fetch client reads such a body for a third of the CPU of a chunked one. A larger result streams: the
 * encoder hands over each batch's bytes as soon as they are written, so encoding (this thread and the
 * JSON workers) and sending overlap, and the body is never held whole. Without a budget, a result
 * under STREAM_AFTER_BYTES is sent whole and a larger one streams.
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
import type { WholeBodies } from './whole-body.ts';

/**
 * Hands encoded bytes to the response, in order. `sent`, when given, is called once the parts have
 * left for the socket (or were copied into a whole body), after which the encoder may write into
 * their memory again; it is never called for parts a Blob or a collecting reader keeps.
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
  /** Bodies sent whole with their length while they fit this budget (see whole-body.ts); without it, only those under STREAM_AFTER_BYTES. */
  wholeBodies?: WholeBodies;
}

/**
 * Runs `req` and resolves with its body: the whole body when the result ends within the whole-body
 * budget (or STREAM_AFTER_BYTES without one), else a stream, as soon as that much is encoded.
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
  /** The body being built whole, until it is sent or goes past the budget. */
  const whole = options.wholeBodies?.open() ?? null;
  /** Parts waiting for the stream: past the budget (with their `sent`), or all of a small body without one. */
  let held: { parts: Uint8Array[]; sent?: () => void }[] = [];
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
  const enqueue: Emit = (parts, sent) => {
    for (const p of parts) if (p.byteLength > 0) (controller!.enqueue(p), (enqueued += p.byteLength));
    // Streamed parts are handed back only to a reader that is known to be done with them (see StreamOptions).
    if (sent && options.recycleSentParts) waiting.push({ end: enqueued, sent });
  };
  const emit: Emit = (parts, sent) => {
    if (controller) return enqueue(parts, sent);
    // Copied into the whole body: the encoder may reuse their memory now.
    if (whole && held.length === 0 && whole.add(parts)) return sent?.();
    held.push({ parts, sent: whole ? sent : undefined });
    for (const p of parts) heldBytes += p.byteLength;
  };
  const signal = req.signal ? AbortSignal.any([req.signal, gone.signal]) : gone.signal;
  return new Promise((resolve, reject) => {
    // Until the body is handed over, an error (an Arrow value that does not fit, a failing query) is
    // still an ordinary error response.
    let sending = false;
    // Set once this promise failed before the body was handed over (a kill, a timeout, the client
    // gone while the body was built): encoding stops at the next chunk.
    let failed = false;
    const streamHeld = (info: { rowsCapped: boolean }) => {
      const body = openStream();
      sending = true;
      if (whole) {
        const { bytes, sent } = whole.handOver();
        enqueue([bytes], sent);
      }
      for (const h of held) enqueue(h.parts, h.sent);
      held = [];
      resolve({ body, rowsCapped: info.rowsCapped });
    };
    queries
      .execute({ ...req, signal }, async (columns, next, profile, info) => {
        // Past the budget (held parts) or, without one, past STREAM_AFTER_BYTES: stream from here.
        const overflowed = () => !sending && (whole ? held.length > 0 : heldBytes >= STREAM_AFTER_BYTES);
        try {
          const encoder = makeEncoder(columns, emit);
          for (let chunk = await next(); chunk; chunk = await next()) {
            recycle();
            await encoder.add(chunk);
            if (overflowed()) streamHeld(info);
            while (controller && (controller.desiredSize ?? 0) <= 0 && !gone.signal.aborted) await new Promise<void>((r) => (wake = r));
            if (gone.signal.aborted || failed || (!sending && signal.aborted)) throw new AppError('invalid', DISCONNECTED);
          }
          await encoder.end({ executionTimeMs: Math.round((performance.now() - started) * 1000) / 1000, profile: profile(), rowsCapped: info.rowsCapped });
          // The closing bytes may be the ones past the budget.
          if (overflowed()) streamHeld(info);
          if (controller) (controller as ReadableStreamDefaultController<Uint8Array>).close();
          else {
            sending = true;
            const body = whole ? whole.blob() : new Blob(held.flatMap((h) => h.parts) as Uint8Array<ArrayBuffer>[]);
            resolve({ body, rowsCapped: info.rowsCapped });
          }
          return encoder;
        } finally {
          // Also when the promise already failed (a kill): the budget and buffer come back either way.
          whole?.close();
        }
      })
      .catch((err: unknown) => {
        whole?.close();
        if (!sending) return (failed = true), reject(err);
        try {
          controller?.error(err);
        } catch {
          // Already cancelled by the client: nothing left to tell.
        }
      });
  });
}

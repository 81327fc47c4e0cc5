/**
 * Query results as streamed response bodies: the encoder hands over each batch's bytes as soon as
 * they are written, so encoding (this thread and the JSON workers) and sending overlap, and a large
 * body is never held whole.
 *
 * The promise settles once the query has run and the encoder produced its first batch: every
 * engine error, timeout and encoding error up to then is an ordinary error response. An error after
 * the first byte (a client gone, a later batch that cannot be encoded) errors the body, which makes
 * the server end the response without its final chunk: HTTP clients report an incomplete body.
 */
import { AppError } from '../lib/errors.ts';
import type { ChunkEncoder, QueryProfile } from './execution.ts';
import type { ResultColumn } from './encode/result.ts';
import type { QueryRequest, QueryService } from './query-service.ts';

/** Hands encoded bytes to the response, in order. */
export type Emit = (parts: Uint8Array[]) => void;

/** What an encoder learns only at the end. */
export interface ResultMeta {
  executionTimeMs: number;
  profile: QueryProfile;
}

/** Writes its body through `emit` as chunks arrive (the opening bytes from its constructor). */
export interface StreamEncoder extends ChunkEncoder {
  /** Writes everything still pending and the closing bytes. */
  end(meta: ResultMeta): void | Promise<void>;
}

/** Bytes queued for the socket before encoding pauses: enough to keep the socket busy, not the whole result. */
const HIGH_WATER_BYTES = 8 << 20;

const DISCONNECTED = 'query cancelled: the client disconnected';

/** Runs `req` and resolves with its body as soon as its first batch is encoded. */
export function streamQuery(queries: QueryService, req: QueryRequest, makeEncoder: (columns: ResultColumn[], emit: Emit) => StreamEncoder): Promise<ReadableStream<Uint8Array>> {
  const started = performance.now();
  const gone = new AbortController();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let wake: (() => void) | null = null;
  const body = new ReadableStream<Uint8Array>(
    {
      start: (c) => void (controller = c),
      pull: () => wake?.(),
      // The client went away mid-body: interrupt the query like a request abort would.
      cancel: () => {
        gone.abort();
        wake?.();
      },
    },
    { highWaterMark: HIGH_WATER_BYTES, size: (p) => p?.byteLength ?? 0 },
  );
  const emit: Emit = (parts) => {
    for (const p of parts) if (p.byteLength > 0) controller.enqueue(p);
  };
  const signal = req.signal ? AbortSignal.any([req.signal, gone.signal]) : gone.signal;
  return new Promise((resolve, reject) => {
    // Until the encoder has produced more than its opening bytes, an error (an Arrow value that does
    // not fit, a failing query) still becomes an ordinary error response.
    let produced = false;
    let sending = false;
    const send = () => {
      sending = true;
      resolve(body);
    };
    queries
      .execute({ ...req, signal }, async (columns, next, profile) => {
        const encoder = makeEncoder(columns, (parts) => {
          produced = true;
          emit(parts);
        });
        produced = false;
        for (let chunk = await next(); chunk; chunk = await next()) {
          await encoder.add(chunk);
          if (produced && !sending) send();
          while ((controller.desiredSize ?? 0) <= 0 && !gone.signal.aborted) await new Promise<void>((r) => (wake = r));
          if (gone.signal.aborted) throw new AppError('invalid', DISCONNECTED);
        }
        await encoder.end({ executionTimeMs: Math.round((performance.now() - started) * 1000) / 1000, profile: profile() });
        controller.close();
        if (!sending) send();
        return encoder;
      })
      .catch((err: unknown) => {
        if (!sending) return reject(err);
        try {
          controller.error(err);
        } catch {
          // Already cancelled by the client: nothing left to tell.
        }
      });
  });
}

/**
 * Request bodies read once, for every route that needs them whole (the write routes): received bytes
 * and inflated bytes are counted as they arrive, against the per-request cap (server.max_payload_size)
 * and against the memory all bodies in flight may hold together (server.max_inflight_body_size).
 * A decompression bomb stops at the cap; it is never inflated past it.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { detectCompression, inflateStream, zstdFramesProblem } from '../../ingest/index.ts';
import type { ByteBudget } from '../../lib/byte-budget.ts';
import { invalid, tooLarge, unavailable } from '../../lib/errors.ts';
import { formatSize } from '../../lib/sizes.ts';
import type { AppEnv } from '../context.ts';

const LARGE_BODY = 16 * 1024 * 1024;

/** The per-request cap and the shared in-flight budget. */
export interface BodyLimits {
  maxBytes: number;
  inflight: ByteBudget;
}

/** Bytes of the shared budget one request holds; all given back when the request ends. */
class Holding {
  private held = 0;
  constructor(private readonly budget: ByteBudget) {}
  take(n: number): void {
    if (!this.budget.take(n)) {
      throw unavailable(`cannot accept the request body now: request bodies in flight already hold ${formatSize(this.budget.inUse())} of ${formatSize(this.budget.limit)} (server.max_inflight_body_size); retry shortly`, 1);
    }
    this.held += n;
  }
  give(n: number): void {
    this.budget.give(n);
    this.held -= n;
  }
  /** Gives everything back; returns how much that was. */
  release(): number {
    const n = this.held;
    this.give(n);
    return n;
  }
}

/** Collects `chunks` into one array, refusing past `maxBytes` and reserving memory before keeping any. */
async function collect(chunks: AsyncIterable<Uint8Array>, maxBytes: number, holding: Holding, what: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.byteLength;
    if (total > maxBytes) throw tooLarge(`${what} is larger than ${formatSize(maxBytes)} (server.max_payload_size)`);
    holding.take(chunk.byteLength);
    parts.push(chunk);
  }
  if (parts.length === 1) return parts[0]!;
  // Joining needs the parts and the whole at once for a moment; both are reserved.
  holding.take(total);
  const whole = new Uint8Array(total);
  let at = 0;
  for (const p of parts) whole.set(p, (at += p.byteLength) - p.byteLength);
  holding.give(total);
  return whole;
}

/**
 * The received bytes. A declared length is reserved up front and read in one piece (the common case,
 * and the fastest); a chunked body is counted chunk by chunk.
 */
async function receive(c: Context<AppEnv>, maxBytes: number, holding: Holding): Promise<Uint8Array> {
  const declared = Number(c.req.header('content-length') ?? NaN);
  if (Number.isSafeInteger(declared) && declared >= 0) {
    if (declared > maxBytes) throw tooLarge(`request body is larger than ${formatSize(maxBytes)} (server.max_payload_size)`);
    holding.take(declared);
    return new Uint8Array(await c.req.raw.arrayBuffer());
  }
  return collect(c.req.raw.body ?? (async function* () {})(), maxBytes, holding, 'request body');
}

/** Sets `body` (decompressed by magic bytes) and `bodyBytes` (bytes received) on the context. */
export function requestBody(limits: BodyLimits): MiddlewareHandler<AppEnv> {
  return async (c: Context<AppEnv>, next) => {
    const holding = new Holding(limits.inflight);
    let refused = true;
    try {
      const raw = await receive(c, limits.maxBytes, holding);
      const kind = detectCompression(raw);
      let body = raw;
      if (kind !== 'none') {
        // A truncated zstd frame would inflate into a shorter body; refuse it instead of losing rows.
        const problem = kind === 'zstd' ? zstdFramesProblem(raw) : null;
        if (problem !== null) throw invalid(`cannot decompress zstd request body: ${problem}`);
        body = await collect(inflateStream([raw], kind), limits.maxBytes, holding, `${kind} request body (decompressed)`);
      }
      c.set('body', body);
      c.set('bodyBytes', raw.byteLength);
      await next();
      refused = c.error !== undefined;
    } finally {
      // A large refused body (a bomb at the cap, a budget overrun) is garbage now; collecting it at
      // once keeps the RSS near the budget instead of letting many refused bodies pile up until the
      // next GC. Accepted writes are left to the ordinary GC: a full collection per write costs throughput.
      if (holding.release() >= LARGE_BODY && refused) Bun.gc(true);
    }
  };
}

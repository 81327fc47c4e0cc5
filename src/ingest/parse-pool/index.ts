/**
 * Parsing off the event loop. The event loop accepts requests, buffers rows and coordinates
 * flushes; parsing a large body is the one step that needs no shared state, so it runs in a small
 * pool of Workers and the two cores work on different requests at once. Small bodies are parsed in
 * place (a round trip to a worker costs more than they do), and so is every body when the pool is
 * off (`ingest.parse_workers = 0`) or a worker cannot start: the answer is the same either way
 * (errors included), only where the work runs differs.
 *
 * MessagePack is cheap to parse (~80 ns a row of eight columns, about what the hand-over costs), so
 * its bodies stay on the event loop up to MIN_MSGPACK_OFFLOAD_BYTES. Measured on `bench:ingest`
 * (2 cores, 10,000-row bodies, wrk 4 connections): parsed in place, svc needed 0.20 s of CPU per
 * million rows and acked 7.8M rows/s; offloaded, 0.29 s and 5.9M (the event loop alone went from 0.03
 * to 0.07 s per million rows waking and answering workers, and the workers spent 0.10 s parsing
 * what takes 0.08 s in place).
 */
import { AppError, type ErrorKind, unavailable } from '../../lib/errors.ts';
import { workerUrl } from '../../lib/worker-url.ts';
import { fromWire } from '../batch-wire.ts';
import type { ColumnBatch } from '../column-batch.ts';
import { columnMemory } from '../column-memory.ts';
import { type LineError, type LineProtocolOptions, type LineProtocolResult, parseLineProtocol } from '../lineprotocol/index.ts';
import { parseMsgpackWrite } from '../msgpack/index.ts';
import type { ErrorData, ParseReply, ParseRequest } from './protocol.ts';

/** Bodies below this size are parsed on the calling thread (about 500 lines of line protocol). */
export const MIN_OFFLOAD_BYTES = 64 * 1024;

/**
 * MessagePack bodies below this size are parsed on the calling thread (see the file comment). Above
 * it a body (~60,000 rows, ~5 ms of parsing) goes to a worker so that one huge write does not hold
 * up every other request on the event loop.
 */
export const MIN_MSGPACK_OFFLOAD_BYTES = 4 * 1024 * 1024;

const EMPTY = new Uint8Array(0);

/**
 * Frees a body the parser is done with at once (detaching its buffer), for the next body to reuse: left to
 * the garbage collector, the bodies of many requests pile up first, and the memory of new ones touched fresh
 * pages (on `bench:ingest`, most of the event loop's page faults were its copy of the received bytes). The
 * MessagePack parser copies every value it keeps (numbers into columns, strings into JS strings), and the
 * caller handed the body over (see `parseMsgpack`).
 */
function freeBody(body: Uint8Array): void {
  const buf = body.buffer;
  if (buf instanceof ArrayBuffer && body.byteOffset === 0 && body.byteLength === buf.byteLength && !buf.detached) buf.transfer(0);
}

/** What a worker answers: the parser's result in one shape for both formats. */
type Parsed = LineProtocolResult;

interface Pending {
  resolve: (r: Parsed) => void;
  reject: (err: unknown) => void;
  /** Parses on this thread when the worker cannot answer; null when the body was handed over. */
  here: (() => Parsed) | null;
}

/** Settles `p` after its worker failed: parsed here when the body was kept, else 503 (nothing was written). */
function parseHere(p: Pending, why: string): void {
  try {
    if (p.here === null) throw unavailable(`cannot parse the request body: ${why}; nothing was written, retry`, 1);
    p.resolve(p.here());
  } catch (err) {
    p.reject(err);
  }
}

const errorOf = (app: ErrorData) => new AppError(app.kind as ErrorKind, app.message, { extra: app.extra, headers: app.headers });

/** One worker and the requests it holds; started on first use. */
class ParseWorker {
  readonly pending = new Map<number, Pending>();
  /** Bodies this worker answered. */
  answered = 0;
  private worker: Worker | null = null;
  private ready: Promise<boolean> | null = null;
  /** Set when a worker failed before it was ready: this slot parses in place from then on. */
  private broken = false;

  constructor(private readonly onLost: (why: string) => void) {}

  /** Whether the worker runs (starting it if needed); false when it cannot start. */
  start(): Promise<boolean> {
    if (this.broken) return Promise.resolve(false);
    if (this.ready) return this.ready;
    const worker = new Worker(workerUrl('ingest/parse-pool/parse-worker.ts'));
    this.worker = worker;
    let started = false;
    this.ready = new Promise<boolean>((resolve) => {
      worker.onmessage = (e: MessageEvent<ParseReply>) => {
        const reply = e.data;
        if ('ready' in reply) return resolve((started = true));
        const p = this.pending.get(reply.id);
        if (!p) return;
        this.pending.delete(reply.id);
        this.answered++;
        if ('error' in reply) {
          // The parser's own refusal (bad input) is thrown again here; anything else is a fault.
          if (reply.app) p.reject(errorOf(reply.app));
          else parseHere(p, `a parse worker failed: ${reply.error}`);
        } else p.resolve({ batches: fromWire(reply.batches), errors: reply.errors, lines: reply.lines, rejected: reply.rejected });
      };
      worker.onerror = (e) => {
        if (!started) this.broken = true;
        resolve(false);
        this.lost(`parse worker failed: ${e.message}`);
      };
    });
    return this.ready;
  }

  post(req: ParseRequest, p: Pending): void {
    this.pending.set(req.id, p);
    // Transferred, never cloned: cloning a 650 KB body cost the event loop 2-4 ms (measured), transferring it ~0.1 ms.
    this.worker!.postMessage(req, [req.body.buffer as ArrayBuffer]);
  }

  /** Settles what the dead worker held; a later request starts a new worker. */
  private lost(why: string): void {
    const worker = this.worker;
    this.worker = null;
    this.ready = null;
    for (const p of this.pending.values()) parseHere(p, why);
    this.pending.clear();
    void worker?.terminate();
    this.onLost(why);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.ready = null;
    if (worker) await worker.terminate();
  }
}

/** `size` parse workers (0: parse on the calling thread). */
export class ParsePool {
  private readonly workers: ParseWorker[];
  private nextId = 1;
  private failures = 0;

  /** `minMsgpackOffloadBytes`: where MessagePack bodies start going to a worker (tests lower it to compare both paths). */
  constructor(
    size: number,
    private readonly onProblem: (message: string) => void = () => {},
    private readonly minMsgpackOffloadBytes = MIN_MSGPACK_OFFLOAD_BYTES,
  ) {
    this.workers = Array.from({ length: size }, () => new ParseWorker((why) => this.lost(why)));
  }

  /**
   * Same result as `parseLineProtocol(body, opts)`. The body is handed over: a large one that is a
   * whole ArrayBuffer moves to the worker without a copy and is detached here, so the caller must
   * not read it afterwards.
   */
  async parseLineProtocol(body: Uint8Array, opts: LineProtocolOptions): Promise<LineProtocolResult> {
    if (!this.offloads(body, MIN_OFFLOAD_BYTES)) return parseLineProtocol(body, opts);
    // Bad options throw here, as they would in place (an empty body parses nothing else).
    parseLineProtocol(EMPTY, opts);
    return this.run(body, (id, sent) => ({ id, format: 'lp', body: sent, precision: opts.precision, now: opts.now }), (kept) => parseLineProtocol(kept, opts));
  }

  /**
   * Same result (or AppError) as `parseMsgpackWrite(body, { now })`; the body is handed over as above,
   * and one parsed in place is freed (detached) once parsed, so the caller must not read it afterwards.
   */
  async parseMsgpack(body: Uint8Array, now: number): Promise<ColumnBatch[]> {
    if (!this.offloads(body, this.minMsgpackOffloadBytes)) {
      // In place, its columns come from memory reused once earlier rows are flushed (see column-memory.ts).
      const batches = columnMemory.parseInArena(() => parseMsgpackWrite(body, { now }));
      freeBody(body);
      return batches;
    }
    const parsed = await this.run(body, (id, sent) => ({ id, format: 'msgpack', body: sent, now }), (kept) => ({
      batches: parseMsgpackWrite(kept, { now }),
      errors: [] as LineError[],
      lines: 0,
      rejected: 0,
    }));
    return parsed.batches;
  }

  /** Bodies parsed by workers so far. */
  get offloaded(): number {
    let n = 0;
    for (const w of this.workers) n += w.answered;
    return n;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }

  private offloads(body: Uint8Array, min: number): boolean {
    return this.workers.length > 0 && body.byteLength >= min;
  }

  private async run(body: Uint8Array, request: (id: number, sent: Uint8Array) => ParseRequest, here: (kept: Uint8Array) => Parsed): Promise<Parsed> {
    const w = this.leastBusy();
    if (!(await w.start())) return here(body);
    const whole = body.buffer instanceof ArrayBuffer && body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    // A view into a larger buffer is copied out (the worker must not get the rest) and kept for a fallback.
    const sent = whole ? body : body.slice();
    const req = request(this.nextId++, sent);
    return new Promise((resolve, reject) => w.post(req, { resolve, reject, here: whole ? null : () => here(body) }));
  }

  private leastBusy(): ParseWorker {
    let best = this.workers[0]!;
    for (const w of this.workers) if (w.pending.size < best.pending.size) best = w;
    return best;
  }

  private lost(why: string): void {
    this.failures++;
    this.onProblem(`${why}; its requests were parsed on the event loop or refused with 503 (${this.failures} so far)`);
  }
}

/**
 * Line-protocol parsing off the event loop. The event loop accepts requests, buffers rows and
 * coordinates flushes; parsing a large body is the one step that needs no shared state, so it runs
 * in a small pool of Workers and the two cores work on different requests at once. Small bodies
 * are parsed in place (a round trip to a worker costs more than they do), and so is every body
 * when the pool is off (`ingest.parse_workers = 0`) or a worker cannot start or dies: the answer is
 * the same either way, only where the work runs differs.
 */
import { unavailable } from '../../lib/errors.ts';
import { workerUrl } from '../../lib/worker-url.ts';
import { fromWire } from '../batch-wire.ts';
import { type LineProtocolOptions, type LineProtocolResult, parseLineProtocol } from '../lineprotocol/index.ts';
import type { ParseReply, ParseRequest } from './protocol.ts';

const EMPTY = new Uint8Array(0);

/** Bodies below this size are parsed on the calling thread (about 500 lines). */
export const MIN_OFFLOAD_BYTES = 64 * 1024;

interface Pending {
  resolve: (r: LineProtocolResult) => void;
  reject: (err: unknown) => void;
  /** The body, kept here when the worker got a copy; null when it was handed over. */
  body: Uint8Array | null;
  opts: LineProtocolOptions;
}

/** Parses `p`'s body on this thread (a worker's fallback), settling its promise either way. */
function parseHere(p: Pending, why: string): void {
  try {
    if (p.body === null) throw unavailable(`cannot parse the request body: ${why}; nothing was written, retry`, 1);
    p.resolve(parseLineProtocol(p.body, p.opts));
  } catch (err) {
    p.reject(err);
  }
}

/** One worker and the requests it holds; started on first use. */
class ParseWorker {
  readonly pending = new Map<number, Pending>();
  private worker: Worker | null = null;
  private ready: Promise<boolean> | null = null;
  /** Set when a worker failed before it was ready: this slot parses in place from then on. */
  private broken = false;

  /** Bodies this worker answered. */
  answered = 0;

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
        // Options were checked before sending, so a throw there is a fault: parse here when the body was kept.
        if ('error' in reply) parseHere(p, reply.error);
        else (this.answered++, p.resolve({ batches: fromWire(reply.batches), errors: reply.errors, lines: reply.lines, rejected: reply.rejected }));
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
    // Transferred, not cloned: cloning a 650 KB body took ~35 ms of the event loop (measured).
    this.worker!.postMessage(req, [req.body.buffer as ArrayBuffer]);
  }

  /** Parses what the dead worker held in place; a later request starts a new worker. */
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

  constructor(
    size: number,
    private readonly onProblem: (message: string) => void = () => {},
  ) {
    this.workers = Array.from({ length: size }, () => new ParseWorker((why) => this.lost(why)));
  }

  /**
   * Same result as `parseLineProtocol(body, opts)`. The body is handed over: a large one that is a
   * whole ArrayBuffer moves to the worker without a copy and is detached here, so the caller must
   * not read it afterwards (copying it cost as much as parsing it on a loaded machine: fresh pages).
   */
  async parseLineProtocol(body: Uint8Array, opts: LineProtocolOptions): Promise<LineProtocolResult> {
    if (this.workers.length === 0 || body.byteLength < MIN_OFFLOAD_BYTES) return parseLineProtocol(body, opts);
    // Bad options throw here, as they would in place (an empty body parses nothing else).
    parseLineProtocol(EMPTY, opts);
    const w = this.leastBusy();
    if (!(await w.start())) return parseLineProtocol(body, opts);
    const id = this.nextId++;
    const whole = body.buffer instanceof ArrayBuffer && body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    // A view into a larger buffer is copied out (the worker must not get the rest), and kept here for a fallback.
    const sent = whole ? body : body.slice();
    return new Promise((resolve, reject) =>
      w.post({ id, body: sent, precision: opts.precision, now: opts.now }, { resolve, reject, body: whole ? null : body, opts }),
    );
  }

  /** Bodies parsed by workers so far. */
  get offloaded(): number {
    let n = 0;
    for (const w of this.workers) n += w.answered;
    return n;
  }

  /** Requests waiting on workers (for tests and stats). */
  get inFlight(): number {
    let n = 0;
    for (const w of this.workers) n += w.pending.size;
    return n;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }

  private leastBusy(): ParseWorker {
    let best = this.workers[0]!;
    for (const w of this.workers) if (w.pending.size < best.pending.size) best = w;
    return best;
  }

  private lost(why: string): void {
    this.failures++;
    this.onProblem(`${why}; its bodies were parsed on the event loop (${this.failures} so far)`);
  }
}

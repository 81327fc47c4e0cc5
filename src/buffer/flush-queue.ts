/**
 * The flush queue: one loop per runner (a flush worker) takes sealed jobs in order.
 * A failed job keeps its rows and returns to the queue after a backoff, unless its owner takes it out
 * (rows that can never be written are set aside on disk, see set-aside.ts); nothing is ever dropped.
 * Writers call `waitForRoom` before accepting data, so a full queue slows them down (then 503s them)
 * instead of growing without bound.
 */
import { unavailable } from '../lib/errors.ts';
import type { FlushJob } from './flush-job.ts';

/** What the queue needs: how to run a job on a connection, and what to do with the outcome. */
export interface FlushQueueDeps<R> {
  runners: readonly R[];
  capacity: number;
  run(runner: R, job: FlushJob): Promise<void>;
  /** Told of a failed run; false takes the job out of the queue (its owner set it aside), true retries it. */
  onFailure(job: FlushJob, err: unknown): boolean;
  onDepth(depth: number): void;
}

const MAX_BACKOFF_MS = 30_000;

/** How long a job that failed `attempts` times waits before it is written again: 250 ms doubling to 30 s. */
export const retryDelayMs = (attempts: number) => Math.min(MAX_BACKOFF_MS, 250 * 2 ** Math.min(attempts - 1, 10));

/** Runs flush jobs with bounded parallelism and retry; see the file comment. */
export class FlushQueue<R> {
  private readonly pending: FlushJob[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly idle: (() => void)[] = [];
  private readonly roomWaiters = new Set<() => void>();
  private retrying = 0;
  private running = 0;
  private stopped = false;

  constructor(private readonly deps: FlushQueueDeps<R>) {
    for (const runner of deps.runners) void this.loop(runner);
  }

  /** Jobs waiting for a runner (including those waiting to retry). */
  get depth(): number {
    return this.pending.length + this.retrying;
  }

  /** Jobs being written right now. */
  get active(): number {
    return this.running;
  }

  /** Queues a job. Never refuses: admission control happens earlier, in `waitForRoom`. */
  push(job: FlushJob): void {
    this.pending.push(job);
    this.changed();
  }

  /** Resolves when the queue has room; throws AppError unavailable (503, Retry-After) after `timeoutMs`. */
  async waitForRoom(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.depth >= this.deps.capacity) {
      const left = deadline - performance.now();
      if (left <= 0) throw unavailable(`cannot accept write: the flush queue is full (${this.depth} jobs waiting); retry later`, 1);
      let wake!: () => void;
      const room = new Promise<void>((r) => (wake = r));
      this.roomWaiters.add(wake);
      const timer = setTimeout(wake, left);
      await room;
      clearTimeout(timer);
      this.roomWaiters.delete(wake);
    }
  }

  /** Resolves when no job is pending, retrying or running. */
  async drained(): Promise<void> {
    while (this.depth > 0 || this.running > 0) await new Promise<void>((r) => this.idle.push(r));
  }

  /** Stops taking jobs once the current ones end (jobs still queued stay unflushed). */
  stop(): void {
    this.stopped = true;
    for (const w of this.waiting.splice(0)) w();
  }

  private async loop(runner: R): Promise<void> {
    while (!this.stopped) {
      const job = this.pending.shift();
      if (!job) {
        await new Promise<void>((r) => this.waiting.push(r));
        continue;
      }
      this.running++;
      this.changed();
      try {
        await this.deps.run(runner, job);
      } catch (err) {
        this.retry(job, err);
      } finally {
        this.running--;
        this.changed();
      }
    }
  }

  private retry(job: FlushJob, err: unknown): void {
    job.attempts++;
    if (!this.deps.onFailure(job, err)) return;
    const delay = retryDelayMs(job.attempts);
    this.retrying++;
    setTimeout(() => {
      this.retrying--;
      // Back to the front: older rows keep going first.
      this.pending.unshift(job);
      this.changed();
    }, delay);
  }

  private changed(): void {
    this.deps.onDepth(this.depth);
    if (this.pending.length > 0) for (const w of this.waiting.splice(0, this.pending.length)) w();
    if (this.depth < this.deps.capacity) for (const w of this.roomWaiters) w();
    if (this.depth === 0 && this.running === 0) for (const w of this.idle.splice(0)) w();
  }
}

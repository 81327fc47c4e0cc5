import { conflict, messageOf } from '../lib/errors.ts';
import type { ExecutionBase, ExecutionKind, ExecutionStore } from './execution-store.ts';

/** The fields a feature adds to its execution records (everything but the shared ones). */
export type ExecutionFields<E extends ExecutionBase> = Omit<E, keyof ExecutionBase>;

/**
 * Runs recorded executions of retention policies and continuous queries: one run per owner at a time
 * (409 otherwise), a record saved when the run starts and again when it ends with its status,
 * duration and error. The work fills in its own counts and may mark the run `partial`; a throw marks it `failed`.
 */
export class ExecutionRunner {
  private readonly running = new Set<number>();

  constructor(
    private readonly store: ExecutionStore,
    private readonly kind: ExecutionKind,
  ) {}

  /** True while a run of `ownerId` is going (a scheduled tick then skips instead of overlapping). */
  isRunning(ownerId: number): boolean {
    return this.running.has(ownerId);
  }

  /** Runs `work` as one execution of `ownerId`; `what` names the owner in the 409 message. */
  async run<E extends ExecutionBase>(
    ownerId: number,
    what: string,
    trigger: ExecutionBase['trigger'],
    fields: ExecutionFields<E>,
    work: (rec: E) => Promise<void>,
  ): Promise<E> {
    if (this.running.has(ownerId)) throw conflict(`${what} is already running`);
    this.running.add(ownerId);
    try {
      const started = performance.now();
      const startedAt = new Date().toISOString();
      const base: ExecutionBase = {
        id: this.store.start(this.kind, ownerId, startedAt),
        trigger,
        status: 'running',
        started_at: startedAt,
        finished_at: null,
        duration_ms: null,
        error: null,
      };
      const rec = { ...base, ...fields } as E;
      this.store.save(rec);
      try {
        await work(rec);
        if (rec.status === 'running') rec.status = 'success';
      } catch (err) {
        rec.status = 'failed';
        rec.error = messageOf(err);
      }
      rec.finished_at = new Date().toISOString();
      rec.duration_ms = Math.round(performance.now() - started);
      this.store.save(rec);
      return rec;
    } finally {
      this.running.delete(ownerId);
    }
  }
}

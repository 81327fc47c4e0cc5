/**
 * Runs retention policies and continuous queries on time: a cron expression (UTC) or a fixed
 * interval aligned to the epoch (`1m` fires at every whole minute). One job per key; setting a key
 * again replaces its trigger, so an updated definition takes effect from its next fire. A fire while
 * the previous run of the same key is still going is skipped: runs never overlap. A run that throws
 * is logged and tried again at the next fire.
 */
import { messageOf } from '../lib/errors.ts';
import type { Logger } from '../observability/index.ts';
import { startCron } from './cron.ts';

/** When a job fires: on a cron expression, or every `everyMs` milliseconds on the epoch grid. */
export type Trigger = { cron: string } | { everyMs: number };

/** The work of one fire; `at` is the scheduled time (window end for continuous queries). */
export type ScheduledRun = (at: Date) => Promise<unknown>;

interface Job {
  trigger: Trigger;
  stop(): void;
  running: boolean;
}

/** Timers for keyed jobs; see the file comment. */
export class Scheduler {
  private readonly jobs = new Map<string, Job>();
  /** Runs going on now: shutdown waits for them before the stores they write to close. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopped = false;

  /** `mayRun` false skips scheduled fires (a cluster node that is not the active compactor). */
  constructor(
    private readonly logger: Logger,
    private readonly mayRun: () => boolean = () => true,
  ) {}

  /** Schedules (or reschedules) `key`. */
  set(key: string, trigger: Trigger, run: ScheduledRun): void {
    if (this.stopped) return;
    this.remove(key);
    const job: Job = { trigger, running: false, stop: () => {} };
    const fire = (at: Date) => {
      if (!this.mayRun()) return;
      if (job.running) {
        this.logger.warn('scheduled run skipped: the previous run is still going', { job: key, at: at.toISOString() });
        return;
      }
      job.running = true;
      const p: Promise<unknown> = run(at)
        .catch((err) => this.logger.error('scheduled run failed; will retry at the next fire', { job: key, error: messageOf(err) }))
        .finally(() => {
          job.running = false;
          this.inFlight.delete(p);
        });
      this.inFlight.add(p);
    };
    job.stop = 'cron' in trigger ? startCron(trigger.cron, fire).stop : everyInterval(trigger.everyMs, fire);
    this.jobs.set(key, job);
  }

  /** Stops and forgets `key` (a run in progress finishes). */
  remove(key: string): void {
    this.jobs.get(key)?.stop();
    this.jobs.delete(key);
  }

  /** Keys with a trigger, for diagnostics and tests. */
  keys(): string[] {
    return [...this.jobs.keys()].sort();
  }

  /** Stops every job and waits for the runs going on (shutdown). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const key of [...this.jobs.keys()]) this.remove(key);
    await Promise.all([...this.inFlight]);
  }
}

/** Fires at every multiple of `everyMs` since the epoch; returns the stop function. */
function everyInterval(everyMs: number, fire: (at: Date) => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const arm = (next: number) => {
    // setTimeout holds at most ~24.8 days; longer waits re-arm until the fire time.
    timer = setTimeout(() => {
      if (stopped) return;
      if (Date.now() < next) return arm(next);
      fire(new Date(next));
      arm((Math.floor(Date.now() / everyMs) + 1) * everyMs);
    }, Math.min(next - Date.now(), 2 ** 31 - 1));
  };
  arm((Math.floor(Date.now() / everyMs) + 1) * everyMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/**
 * Cron expressions of retention policies and continuous queries (croner, UTC). The spec's form is 5
 * fields (minute hour day-of-month month day-of-week); a 6-field form with a leading seconds field is
 * accepted too, for tests and fine-grained schedules.
 */
import { Cron } from 'croner';

const OPTIONS = { paused: true, timezone: 'UTC', mode: '5-or-6-parts' } as const;

/**
 * Why `pattern` is not an accepted cron expression, or null: the one place a pattern is checked.
 * `fields: 5` refuses the 6-field form (settings whose documented form is 5 fields).
 */
export function cronProblem(pattern: string, opts: { fields?: 5 } = {}): string | null {
  if (opts.fields === 5 && pattern.trim().split(/\s+/).length !== 5) return `'${pattern}' must be a 5-field cron expression (minute hour day-of-month month day-of-week)`;
  try {
    new Cron(pattern, OPTIONS).stop();
    return null;
  } catch (err) {
    return `invalid cron expression '${pattern}' (5 fields: minute hour day-of-month month day-of-week): ${(err as Error).message.replace(/^CronPattern: /, '')}`;
  }
}

/** The latest `n` fire times of `pattern` strictly before `before`, newest first. */
export function previousFires(pattern: string, before: Date, n: number): Date[] {
  const cron = new Cron(pattern, OPTIONS);
  try {
    // previousRuns counts a fire earlier in the same second as the reference; the filter keeps "strictly before".
    return cron.previousRuns(n, before).filter((d) => d.getTime() < before.getTime());
  } finally {
    cron.stop();
  }
}

/** A running cron job. */
export interface CronJob {
  /** When it fires next, or null when never. */
  next(): Date | null;
  stop(): void;
}

/**
 * A running cron job; `fire` receives the scheduled time of each run. With `protect`, a run still
 * going when the next is due makes that next one skip.
 */
export function startCron(pattern: string, fire: (at: Date) => unknown, opts: { protect?: boolean } = {}): CronJob {
  const job = new Cron(pattern, { timezone: 'UTC', mode: '5-or-6-parts', protect: opts.protect ?? false }, (self: Cron) => void fire(self.currentRun() ?? new Date()));
  return { next: () => job.nextRun(), stop: () => job.stop() };
}

/** The next fire time of `pattern` after now, or null when it never fires. */
export function nextFire(pattern: string): Date | null {
  const cron = new Cron(pattern, OPTIONS);
  try {
    return cron.nextRun();
  } finally {
    cron.stop();
  }
}

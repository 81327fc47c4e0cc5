/**
 * Cron expressions of retention policies and continuous queries (croner, UTC). The spec's form is 5
 * fields (minute hour day-of-month month day-of-week); a 6-field form with a leading seconds field is
 * accepted too, for tests and fine-grained schedules.
 */
import { Cron } from 'croner';

const OPTIONS = { paused: true, timezone: 'UTC', mode: '5-or-6-parts' } as const;

/** Why `pattern` is not an accepted cron expression, or null. */
export function cronProblem(pattern: string): string | null {
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

/** A running cron job; `fire` receives the scheduled time of each run. */
export function startCron(pattern: string, fire: (at: Date) => void): { stop(): void } {
  const job = new Cron(pattern, { timezone: 'UTC', mode: '5-or-6-parts' }, (self: Cron) => fire(self.currentRun() ?? new Date()));
  return { stop: () => job.stop() };
}

/** The two compaction schedules (5-field cron, UTC). */
import { Cron } from 'croner';

/** Started cron jobs and when the next one fires. */
export interface Schedules {
  next(): Date | null;
  stop(): void;
}

/** Throws "cannot start: ..." unless `pattern` is a 5-field cron expression croner accepts. */
export function checkCron(name: string, pattern: string): void {
  if (pattern.trim().split(/\s+/).length !== 5) throw new Error(`cannot start: ${name} = "${pattern}" must be a 5-field cron expression (minute hour day-of-month month day-of-week)`);
  try {
    new Cron(pattern, { paused: true, timezone: 'UTC' }).stop();
  } catch (err) {
    throw new Error(`cannot start: ${name} = "${pattern}" is not a valid cron expression: ${(err as Error).message}`);
  }
}

/** Starts one cron per entry; a run that is still going when the next fires is skipped (protect). */
export function startSchedules(entries: readonly { pattern: string; run: () => void }[]): Schedules {
  const crons = entries.map((e) => new Cron(e.pattern, { timezone: 'UTC', protect: true }, () => e.run()));
  return {
    next: () =>
      crons
        .map((c) => c.nextRun())
        .filter((d): d is Date => d !== null)
        .sort((a, b) => a.getTime() - b.getTime())[0] ?? null,
    stop: () => crons.forEach((c) => c.stop()),
  };
}

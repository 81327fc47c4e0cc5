/** The two compaction schedules (5-field cron, UTC). */
import { StartupError } from '../../lib/errors.ts';
import { cronProblem, startCron } from '../cron.ts';

/** Started cron jobs and when the next one fires. */
export interface Schedules {
  next(): Date | null;
  stop(): void;
}

/** Throws a 'cannot start' StartupError unless `pattern` is a 5-field cron expression. */
export function checkCron(name: string, pattern: string): void {
  const problem = cronProblem(pattern, { fields: 5 });
  if (problem !== null) throw new StartupError('config', `${name}: ${problem}`);
}

/** Starts one cron per entry; a run that is still going when the next fires is skipped (protect). */
export function startSchedules(entries: readonly { pattern: string; run: () => void }[]): Schedules {
  const jobs = entries.map((e) => startCron(e.pattern, () => e.run(), { protect: true }));
  return {
    next: () =>
      jobs
        .map((j) => j.next())
        .filter((d): d is Date => d !== null)
        .sort((a, b) => a.getTime() - b.getTime())[0] ?? null,
    stop: () => jobs.forEach((j) => j.stop()),
  };
}

/**
 * The time window of a continuous-query run, and the `$start` / `$end` placeholders. With an
 * `interval`, windows are the interval's slots on the epoch grid (`1m`: whole minutes); with only a
 * cron `schedule`, a window runs from the previous fire time to this one. A run at time `at` covers
 * the window that ended at `at` (scheduled) or the last window ended by now (manual).
 */
import { parseDuration } from '../../lib/durations.ts';
import { previousFires } from '../cron.ts';

/** [start, end) in epoch milliseconds. */
export interface CqWindow {
  start: number;
  end: number;
}

/** How a query is timed: its interval in ms (or null) and its effective cron (own or the default). */
export interface CqTiming {
  intervalMs: number | null;
  cron: string;
}

/** Timing of a query from its fields and the `continuous_queries.schedule` default. */
export function timingOf(q: { interval: string | null; schedule: string | null }, defaultCron: string): CqTiming {
  return { intervalMs: q.interval ? parseDuration(q.interval) : null, cron: q.schedule ?? defaultCron };
}

/** The window a run ending at (scheduled) or latest before (manual) `at` covers. */
export function windowAt(t: CqTiming, at: number): CqWindow {
  if (t.intervalMs) {
    const end = Math.floor(at / t.intervalMs) * t.intervalMs;
    return { start: end - t.intervalMs, end };
  }
  // The scheduled fire itself counts as the end: look for fires strictly before at + 1 ms.
  const [end, start] = previousFires(t.cron, new Date(at + 1), 2).map((d) => d.getTime());
  const e = end ?? at;
  return { start: start ?? e - 86_400_000, end: e };
}

/** A TIMESTAMP literal for epoch milliseconds (UTC). */
export function timestampLiteral(ms: number): string {
  return `TIMESTAMP '${new Date(ms).toISOString().replace('T', ' ').replace('Z', '')}'`;
}

/**
 * Replaces `$start` and `$end` outside string literals, quoted names and comments by TIMESTAMP
 * literals of the window. Other `$` words are left alone (the query guard refuses parameters).
 */
export function bindWindow(sql: string, w: CqWindow): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i]!;
    const skipTo = (end: number) => {
      out += sql.slice(i, end);
      i = end;
    };
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === ch && sql[j + 1] !== ch)) j += sql[j] === ch ? 2 : 1;
      skipTo(Math.min(sql.length, j + 1));
    } else if (ch === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      skipTo(nl < 0 ? sql.length : nl);
    } else if (ch === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      skipTo(close < 0 ? sql.length : close + 2);
    } else if (ch === '$') {
      const m = /^\$(start|end)(?![A-Za-z0-9_])/.exec(sql.slice(i, i + 7));
      if (m) {
        out += timestampLiteral(m[1] === 'start' ? w.start : w.end);
        i += m[0].length;
      } else skipTo(i + 1);
    } else skipTo(i + 1);
  }
  return out;
}

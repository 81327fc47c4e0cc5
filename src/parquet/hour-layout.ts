/** How a set of batches splits into UTC hours, and whether its rows already arrive in time order. */
import { MICROS_PER_HOUR, type ColumnBatch } from '../ingest/index.ts';

/** The rows of one UTC hour: count and time range (epoch µs, inclusive). */
export interface HourPart {
  hour: number;
  rows: number;
  minTime: number;
  maxTime: number;
}

/** Hour parts in ascending hour order, and `sorted` = every row's time >= the previous row's. */
export interface TimeLayout {
  parts: HourPart[];
  sorted: boolean;
}

/** One pass over the time columns: hour parts and sortedness. */
export function hourLayout(batches: readonly ColumnBatch[]): TimeLayout {
  const byHour = new Map<number, HourPart>();
  let sorted = true;
  let prev = -Infinity;
  let cur: HourPart | null = null;
  for (const b of batches) {
    const time = b.time;
    for (let i = 0; i < b.length; i++) {
      const t = time[i]!;
      if (t < prev) sorted = false;
      prev = t;
      if (cur === null || t < cur.hour || t >= cur.hour + MICROS_PER_HOUR) {
        const hour = Math.floor(t / MICROS_PER_HOUR) * MICROS_PER_HOUR;
        cur = byHour.get(hour) ?? null;
        if (cur === null) byHour.set(hour, (cur = { hour, rows: 0, minTime: t, maxTime: t }));
      }
      cur.rows++;
      if (t < cur.minTime) cur.minTime = t;
      if (t > cur.maxTime) cur.maxTime = t;
    }
  }
  return { parts: [...byHour.values()].sort((a, b) => a.hour - b.hour), sorted };
}

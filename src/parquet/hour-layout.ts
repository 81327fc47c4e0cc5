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
  for (const b of batches) {
    const time = b.time;
    let i = 0;
    while (i < b.length) {
      // Rows of one hour in a run are summed in locals: writing to the part object per row cost more than the scan.
      const first = time[i]!;
      const hour = Math.floor(first / MICROS_PER_HOUR) * MICROS_PER_HOUR;
      const end = hour + MICROS_PER_HOUR;
      let min = first;
      let max = first;
      const start = i;
      for (; i < b.length; i++) {
        const t = time[i]!;
        if (t < hour || t >= end) break;
        if (t < prev) sorted = false;
        prev = t;
        if (t < min) min = t;
        if (t > max) max = t;
      }
      const part = byHour.get(hour);
      if (part === undefined) byHour.set(hour, { hour, rows: i - start, minTime: min, maxTime: max });
      else {
        part.rows += i - start;
        if (min < part.minTime) part.minTime = min;
        if (max > part.maxTime) part.maxTime = max;
      }
    }
  }
  return { parts: [...byHour.values()].sort((a, b) => a.hour - b.hour), sorted };
}

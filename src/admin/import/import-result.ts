/** The body every import route answers with. */

/** `{status, result}` of a successful import; times are RFC 3339 UTC, `columns` are the stored column names (`time` first). */
export interface ImportResult {
  status: 'success';
  result: {
    database: string;
    /** The measurement; a line-protocol file with several lists them comma-separated. */
    measurement: string;
    rows_imported: number;
    partitions_created: number;
    time_range_min: string;
    time_range_max: string;
    columns: string[];
    duration_ms: number;
  };
}

/** Epoch microseconds as RFC 3339 UTC with only as many fraction digits as needed (`...:05Z`, `...:05.25Z`, `...:05.000001Z`). */
export function rfc3339Micros(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const rest = micros - ms * 1000;
  const base = new Date(ms).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  const fraction = (base.slice(20, 23) + String(Math.round(rest)).padStart(3, '0')).replace(/0+$/, '');
  return `${base.slice(0, 19)}${fraction ? '.' + fraction : ''}Z`;
}

/** Builds the response body from what was committed. */
export function importResult(
  database: string,
  done: { measurements: string[]; rows: number; files: unknown[]; minTime: number; maxTime: number; columns: string[] },
  durationMs: number,
): ImportResult {
  return {
    status: 'success',
    result: {
      database,
      measurement: done.measurements.join(','),
      rows_imported: done.rows,
      partitions_created: done.files.length,
      time_range_min: rfc3339Micros(done.minTime),
      time_range_max: rfc3339Micros(done.maxTime),
      columns: done.columns,
      duration_ms: Math.round(durationMs),
    },
  };
}

/**
 * Query results as terminal text: an aligned table (numbers right-aligned, long cells cut with an
 * ellipsis) or RFC 4180 CSV.
 */

/** A JSON query result as the server sends it. */
export interface JsonResult {
  columns: string[];
  types: string[];
  data: unknown[][];
  row_count: number;
  execution_time_ms: number;
}

const MAX_CELL = 60;
const NUMERIC = /INT|DOUBLE|FLOAT|DECIMAL|REAL|NUMERIC/i;

/** A cell as text: null as NULL in tables (empty in CSV), objects as JSON. */
function text(v: unknown, nullAs: string): string {
  if (v === null || v === undefined) return nullAs;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** Display width of a string (code points; wide characters counted as one). */
const width = (s: string) => [...s].length;

function cut(s: string): string {
  const chars = [...s.replace(/[\r\n\t]/g, ' ')];
  return chars.length > MAX_CELL ? chars.slice(0, MAX_CELL - 1).join('') + '…' : chars.join('');
}

/** The result as an aligned table with a header rule, without the footer line. */
export function renderTable(r: JsonResult): string {
  const cells = r.data.map((row) => r.columns.map((_, i) => cut(text(row[i], 'NULL'))));
  const widths = r.columns.map((c, i) => Math.max(width(c), ...cells.map((row) => width(row[i]!))));
  const right = r.types.map((t) => NUMERIC.test(t));
  const pad = (s: string, i: number) => (right[i] ? ' '.repeat(widths[i]! - width(s)) + s : s + ' '.repeat(widths[i]! - width(s)));
  const line = (row: string[]) => row.map(pad).join(' | ').trimEnd();
  return [line(r.columns.map(cut)), widths.map((w) => '-'.repeat(w)).join('-+-'), ...cells.map(line)].join('\n') + '\n';
}

/** `(3 rows, server 1.2 ms, total 4 ms)`. */
export function footer(r: JsonResult, totalMs: number): string {
  return `(${r.row_count} row${r.row_count === 1 ? '' : 's'}, server ${r.execution_time_ms.toFixed(1)} ms, total ${Math.round(totalMs)} ms)\n`;
}

/** The result as CSV with a header row. */
export function renderCsv(r: JsonResult): string {
  const field = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
  return [r.columns.map(field).join(','), ...r.data.map((row) => r.columns.map((_, i) => field(text(row[i], ''))).join(','))].join('\n') + '\n';
}

/**
 * A line chart of a result with a time column and numeric columns (uPlot, made for time series:
 * canvas, 100k points per series draw in milliseconds).
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom.ts';

const MAX_SERIES = 8;
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];

/** What a chart would plot: the time column and up to MAX_SERIES numeric columns; null when none. */
export function chartPlan(columns: string[], types: string[]): { time: number; series: number[] } | null {
  const time = types.findIndex((t) => /^TIMESTAMP|^DATE$/i.test(t));
  if (time < 0) return null;
  const series = types.flatMap((t, i) => (i !== time && /INT|DOUBLE|FLOAT|DECIMAL|REAL|NUMERIC/i.test(t) && !/\[\]|STRUCT|MAP/i.test(t) ? [i] : [])).slice(0, MAX_SERIES);
  return series.length ? { time, series } : null;
}

/** The chart element, or null when the result has nothing to plot. */
export function resultChart(columns: string[], types: string[], data: unknown[][], width: number): HTMLElement | null {
  const plan = chartPlan(columns, types);
  if (!plan) return null;
  // uPlot wants x ascending; results are often newest first.
  const order = data.map((_, r) => r).filter((r) => data[r]![plan.time] !== null);
  const xs = order.map((r) => Date.parse(String(data[r]![plan.time])) / 1000);
  const sorted = order.map((r, k) => [xs[k]!, r] as const).sort((a, b) => a[0] - b[0]);
  const x = Float64Array.from(sorted, ([t]) => t);
  const ys = plan.series.map((i) => sorted.map(([, r]) => {
    const v = data[r]![i];
    return v === null || v === undefined ? null : Number(v);
  }));
  const el = h('div', { class: 'result-chart', 'data-testid': 'result-chart' });
  const opts: uPlot.Options = {
    width: Math.max(320, width),
    height: 280,
    scales: { x: { time: true } },
    // The grid shows UTC (as the server sends it); the time axis matches it.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    series: [{}, ...plan.series.map((i, k) => ({ label: columns[i], stroke: COLORS[k % COLORS.length], width: 1.5, spanGaps: false }))],
    axes: [{}, {}],
  };
  new uPlot(opts, [x as unknown as number[], ...ys] as uPlot.AlignedData, el);
  return el;
}

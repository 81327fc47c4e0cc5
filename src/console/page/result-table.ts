/**
 * The result grid: only the rows in view (plus a margin) exist in the DOM, positioned over a spacer
 * as tall as all rows, so 100k rows scroll as smoothly as 100. Row elements are reused.
 */
import { cellText, h } from './dom.ts';

const ROW_HEIGHT = 24;
const OVERSCAN = 10;
const MAX_WIDTH_CH = 40;

/** Renders `columns` x `data` (row-major) as a scrolling grid. */
export function resultTable(columns: string[], types: string[], data: unknown[][]): HTMLElement {
  // Column widths from the header and the first rows: the grid never measures the DOM.
  const widths = columns.map((name, i) => {
    let w = Math.max(name.length, 4);
    for (let r = 0; r < Math.min(data.length, 200); r++) w = Math.max(w, cellText(data[r]![i]).length);
    return Math.min(w, MAX_WIDTH_CH) + 2;
  });
  const numeric = types.map((t) => /INT|DOUBLE|FLOAT|DECIMAL|REAL|NUMERIC/i.test(t));
  const cell = (text: string, i: number, cls: string) => {
    const el = h('div', { class: `${cls}${numeric[i] ? ' num' : ''}` }, text);
    el.style.width = `${widths[i]}ch`;
    return el;
  };
  const header = h('div', { class: 'grid-row grid-head', role: 'row' }, ...columns.map((c, i) => {
    const el = cell(c, i, 'grid-cell');
    el.title = types[i] ?? '';
    return el;
  }));
  const spacer = h('div', { class: 'grid-spacer' });
  spacer.style.height = `${data.length * ROW_HEIGHT}px`;
  const viewport = h('div', { class: 'grid-viewport', 'data-testid': 'result-table', role: 'grid', 'aria-rowcount': String(data.length) }, header, spacer);
  const pool: HTMLElement[] = [];

  const paint = () => {
    const first = Math.max(0, Math.floor(viewport.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(data.length, Math.ceil((viewport.scrollTop + viewport.clientHeight) / ROW_HEIGHT) + OVERSCAN);
    const needed = last - first;
    while (pool.length < needed) {
      const row = h('div', { class: 'grid-row', role: 'row' }, ...columns.map((_, i) => cell('', i, 'grid-cell')));
      spacer.appendChild(row);
      pool.push(row);
    }
    for (let k = 0; k < pool.length; k++) {
      const row = pool[k]!;
      const r = first + k;
      if (k >= needed) {
        row.hidden = true;
        continue;
      }
      row.hidden = false;
      row.style.transform = `translateY(${r * ROW_HEIGHT}px)`;
      row.dataset.row = String(r);
      const values = data[r]!;
      const cells = row.children;
      for (let i = 0; i < columns.length; i++) (cells[i] as HTMLElement).textContent = cellText(values[i]);
    }
  };
  let queued = false;
  viewport.addEventListener('scroll', () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      paint();
    });
  });
  // The first paint needs the viewport's height, known once it is in the document.
  requestAnimationFrame(paint);
  new ResizeObserver(() => paint()).observe(viewport);
  return viewport;
}

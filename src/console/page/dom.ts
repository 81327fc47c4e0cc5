/** A small element builder: the console is plain DOM, no framework. */

type Child = Node | string | number | null | undefined | false;
type Attr = string | number | boolean | null | undefined | ((ev: Event) => void);

/** `h('button', {class: 'x', 'data-testid': 'run', onclick: fn}, 'Run')`; false/null attributes are left off. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, Attr> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (value === true) el.setAttribute(key, '');
    else if (key === 'value' && 'value' in el) (el as HTMLInputElement).value = String(value);
    else el.setAttribute(key, String(value));
  }
  append(el, ...children);
  return el;
}

/** Appends children, skipping empty ones. */
export function append(el: Node, ...children: Child[]): void {
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
}

/** Replaces an element's children. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, ...children);
}

/** An error box (role=alert) holding the server's message. */
export function errorBox(message: string, testid = 'error'): HTMLElement {
  return h('div', { class: 'error', role: 'alert', 'data-testid': testid }, message);
}

/** Rows of records as a plain table with the given columns, and optional per-row action buttons. */
export function recordTable(rows: Record<string, unknown>[], columns: string[], actions?: (row: Record<string, unknown>) => Child[]): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'muted' }, 'none');
  const head = h('tr', {}, ...columns.map((c) => h('th', {}, c)), actions ? h('th', {}, '') : null);
  const body = rows.map((r) => h('tr', {}, ...columns.map((c) => h('td', {}, cellText(r[c]))), actions ? h('td', { class: 'actions' }, ...actions(r)) : null));
  return h('table', { class: 'records' }, h('thead', {}, head), h('tbody', {}, ...body));
}

/** A cell's text: objects as compact JSON, null as empty. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** Saves `bytes` as a file through a temporary object URL. */
export function download(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: filename });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * The SQL page: editor, run (Ctrl+Enter) and cancel, history, the result as a grid and a chart, and
 * export of the result as CSV, Parquet or Arrow.
 */
import { ApiError, type Api, type QueryResult } from './api.ts';
import { download, errorBox, h, replace } from './dom.ts';
import { cancelOnServer } from './query-cancel.ts';
import { resultChart } from './result-chart.ts';
import { resultTable } from './result-table.ts';
import { sqlEditor } from './sql-editor.ts';

const HISTORY_KEY = 'svc.console.history';
const HISTORY_SIZE = 50;

function history(): string[] {
  try {
    const list: unknown = JSON.parse(localStorage.getItem(HISTORY_KEY) ?? '[]');
    return Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

function remember(sql: string): void {
  localStorage.setItem(HISTORY_KEY, JSON.stringify([sql, ...history().filter((s) => s !== sql)].slice(0, HISTORY_SIZE)));
}

/** The page; `initialSql` prefills the editor (the schema browser opens a measurement here). */
export function queryPage(api: Api, initialSql = history()[0] ?? 'SHOW DATABASES'): HTMLElement {
  let running: { abort: AbortController; sql: string } | null = null;
  let last: { sql: string; database: string } | null = null;
  const database = h('input', { class: 'db-input', placeholder: 'database (for bare names)', 'data-testid': 'query-database', 'aria-label': 'database' });
  const editor = sqlEditor(initialSql, () => void run());
  const runButton = h('button', { class: 'primary', 'data-testid': 'run-button', title: 'Ctrl+Enter', onclick: () => void run() }, 'Run');
  const cancelButton = h('button', { 'data-testid': 'cancel-button', disabled: true, onclick: () => void cancel() }, 'Cancel');
  const historySelect = h('select', { 'data-testid': 'query-history', 'aria-label': 'history', onchange: () => pick() });
  const status = h('span', { class: 'status', 'data-testid': 'query-status' });
  const exports = h('span', { class: 'exports', hidden: true }, 'Export: ',
    ...(['csv', 'parquet', 'arrow'] as const).map((f) => h('button', { 'data-testid': `export-${f}`, onclick: () => void exportAs(f) }, f.toUpperCase())));
  const messages = h('div', {});
  const output = h('div', { class: 'result' });

  const fillHistory = () => replace(historySelect, h('option', { value: '' }, 'History…'), ...history().map((s) => h('option', { value: s }, s.length > 80 ? `${s.slice(0, 80)}…` : s)));
  const pick = () => {
    if (historySelect.value) editor.value = historySelect.value;
    historySelect.value = '';
  };
  const headers = () => (database.value.trim() ? { 'x-svc-database': database.value.trim() } : undefined);

  async function run(): Promise<void> {
    if (running) return;
    const sql = editor.value.trim();
    if (!sql) return;
    running = { abort: new AbortController(), sql };
    runButton.disabled = true;
    cancelButton.disabled = false;
    replace(messages);
    status.textContent = 'running…';
    const started = performance.now();
    try {
      const result = await api.json<QueryResult>('POST', '/api/v1/query', { sql }, { signal: running.abort.signal, headers: headers() });
      remember(sql);
      fillHistory();
      last = { sql, database: database.value.trim() };
      const ms = performance.now() - started;
      status.textContent = `${result.row_count.toLocaleString()} rows · server ${result.execution_time_ms.toFixed(1)} ms · total ${ms.toFixed(0)} ms`;
      exports.hidden = false;
      const chart = resultChart(result.columns, result.types, result.data, output.clientWidth || 900);
      replace(output, chart, resultTable(result.columns, result.types, result.data));
    } catch (err) {
      const aborted = (err as Error).name === 'AbortError';
      status.textContent = aborted ? 'cancelled' : 'failed';
      // The previous result would read as this query's: it goes.
      last = null;
      exports.hidden = true;
      replace(output);
      replace(messages, aborted ? h('div', { class: 'notice', 'data-testid': 'query-cancelled' }, 'Query cancelled.') : errorBox(messageOf(err), 'query-error'));
    } finally {
      running = null;
      runButton.disabled = false;
      cancelButton.disabled = true;
    }
  }

  async function cancel(): Promise<void> {
    const current = running;
    if (!current) return;
    // Aborting the request is enough on its own: the server cancels a query whose client went away.
    // The registry cancel (when the server has query management) also stops it by id at once.
    const note = await cancelOnServer(api, current.sql).catch((err: unknown) => `Cannot look up the running query on the server: ${messageOf(err)}`);
    current.abort.abort();
    if (note) append(note);
  }

  function append(text: string) {
    messages.appendChild(h('div', { class: 'muted' }, text));
  }

  async function exportAs(format: 'csv' | 'parquet' | 'arrow'): Promise<void> {
    if (!last) return;
    try {
      const res = await api.request('POST', '/api/v1/query/export', { sql: last.sql, format }, { headers: last.database ? { 'x-svc-database': last.database } : undefined });
      download(await res.blob(), `svc-result.${format}`);
    } catch (err) {
      replace(messages, errorBox(messageOf(err), 'export-error'));
    }
  }

  fillHistory();
  return h('section', { class: 'page query-page' },
    h('div', { class: 'toolbar' }, runButton, cancelButton, database, historySelect, status, exports),
    editor.element,
    messages,
    output,
  );
}

/** The message to show for a failed call. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  return `cannot reach the server: ${(err as Error).message}`;
}

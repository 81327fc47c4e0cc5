/**
 * Write / import: a CSV, Parquet or line-protocol file goes to the import routes with a progress bar
 * (XMLHttpRequest: fetch reports no upload progress).
 */
import { errorMessage, type Api } from './api.ts';
import { errorBox, h, replace } from './dom.ts';

const FORMATS = { csv: 'text/csv', parquet: 'application/octet-stream', lp: 'text/plain' } as const;
type Format = keyof typeof FORMATS;

function formatOf(name: string): Format | null {
  const ext = name.toLowerCase().replace(/\.(gz|zst)$/, '').split('.').pop() ?? '';
  if (ext === 'csv' || ext === 'tsv') return 'csv';
  if (ext === 'parquet' || ext === 'pq') return 'parquet';
  if (ext === 'lp' || ext === 'txt' || ext === 'line') return 'lp';
  return null;
}

/** The page. */
export function writePage(api: Api): HTMLElement {
  const file = h('input', { type: 'file', 'data-testid': 'upload-file', accept: '.csv,.tsv,.parquet,.pq,.lp,.txt,.gz,.zst' });
  const format = h('select', { 'data-testid': 'upload-format', 'aria-label': 'format' }, ...Object.keys(FORMATS).map((f) => h('option', { value: f }, f)));
  const database = h('input', { placeholder: 'database', value: 'default', 'data-testid': 'upload-database', 'aria-label': 'database' });
  const measurement = h('input', { placeholder: 'measurement (CSV, Parquet)', 'data-testid': 'upload-measurement', 'aria-label': 'measurement' });
  const timeColumn = h('input', { placeholder: 'time column (default: time)', 'data-testid': 'upload-time-column', 'aria-label': 'time column' });
  const progress = h('progress', { max: '100', value: '0', 'data-testid': 'upload-progress' });
  const progressText = h('span', { class: 'muted' });
  const result = h('div', { 'data-testid': 'upload-result' });
  const button = h('button', { class: 'primary', 'data-testid': 'upload-button', onclick: () => upload() }, 'Upload');

  file.addEventListener('change', () => {
    const f = file.files?.[0];
    const guessed = f ? formatOf(f.name) : null;
    if (guessed) format.value = guessed;
  });

  function upload(): void {
    const f = file.files?.[0];
    if (!f) return replace(result, errorBox('choose a file first', 'upload-error'));
    const fmt = format.value as Format;
    const q = new URLSearchParams();
    if (database.value.trim()) q.set('db', database.value.trim());
    if (fmt !== 'lp') {
      if (!measurement.value.trim()) return replace(result, errorBox('a measurement is required for CSV and Parquet files', 'upload-error'));
      q.set('measurement', measurement.value.trim());
      if (timeColumn.value.trim()) q.set('time_column', timeColumn.value.trim());
    }
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/api/v1/import/${fmt}?${q}`);
    for (const [k, v] of Object.entries(api.authHeaders({ 'content-type': FORMATS[fmt] }))) xhr.setRequestHeader(k, v);
    if (database.value.trim()) xhr.setRequestHeader('x-svc-database', database.value.trim());
    xhr.upload.addEventListener('progress', (ev) => {
      if (!ev.lengthComputable) return;
      progress.value = Math.round((ev.loaded / ev.total) * 100);
      progressText.textContent = ` ${ev.loaded.toLocaleString()} / ${ev.total.toLocaleString()} bytes`;
    });
    xhr.addEventListener('load', async () => {
      button.disabled = false;
      const res = new Response(xhr.responseText, { status: xhr.status });
      if (xhr.status === 401) {
        api.token = null;
        api.onUnauthorized();
        return;
      }
      if (xhr.status >= 300) return replace(result, errorBox(await errorMessage(res), 'upload-error'));
      progress.value = 100;
      const body = JSON.parse(xhr.responseText || '{}') as { result?: { rows_imported?: number; database?: string; measurement?: string; partitions_created?: number } };
      const r = body.result ?? {};
      replace(result, h('div', { class: 'notice', 'data-testid': 'upload-done' }, `Imported ${r.rows_imported ?? '?'} rows into ${r.database ?? ''}.${r.measurement ?? ''} (${r.partitions_created ?? 0} hourly files).`));
    });
    xhr.addEventListener('error', () => {
      button.disabled = false;
      replace(result, errorBox('cannot reach the server: the upload failed', 'upload-error'));
    });
    button.disabled = true;
    progress.value = 0;
    replace(result);
    xhr.send(f);
  }

  return h('section', { class: 'page write-page' },
    h('h2', {}, 'Write / import'),
    h('p', { class: 'muted' }, 'Upload CSV, Parquet or line protocol (gzip or zstd compressed too). CSV needs a time column, RFC 3339 or epoch values.'),
    h('div', { class: 'form' }, file, format, database, measurement, timeColumn, button),
    h('div', { class: 'progress' }, progress, progressText),
    result,
  );
}

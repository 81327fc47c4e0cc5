/**
 * `svc import <file> --measurement m [--db d] [--format csv|parquet|lp|tle] ...`: streams a file to the
 * import routes of a running server (`--url`, default http://127.0.0.1:8000; `--token` or env
 * SVC_TOKEN), drawing a progress bar with bytes sent and rows per second on stderr, and prints the
 * server's result as JSON on stdout. Exit codes: 0 imported, 1 the server refused or failed, 2 usage.
 */
import { basename } from 'node:path';
import { formatSize } from '../lib/sizes.ts';
import type { ParsedArgs } from './args.ts';

const USAGE = 'usage: svc import <file> --measurement M [--db D] [--format csv|parquet|lp|tle] [--url URL] [--token TOKEN]';
const FORMATS = ['csv', 'parquet', 'lp', 'tle'] as const;
type Format = (typeof FORMATS)[number];
const EXTENSIONS: Record<string, Format> = { csv: 'csv', tsv: 'csv', parquet: 'parquet', pq: 'parquet', lp: 'lp', line: 'lp', influx: 'lp', tle: 'tle', '2le': 'tle', '3le': 'tle' };

/** The import format named by a file's extension (a trailing .gz or .zst is looked through), or null. */
export function formatOf(file: string): Format | null {
  const parts = basename(file).toLowerCase().split('.');
  if (parts.length > 2 && ['gz', 'gzip', 'zst'].includes(parts.at(-1)!)) parts.pop();
  return parts.length > 1 ? (EXTENSIONS[parts.at(-1)!] ?? null) : null;
}

/** The route and query string for one import. */
export function importPath(format: Format, flags: ParsedArgs['flags'], file: string): string {
  const q = new URLSearchParams();
  const str = (flag: string, param: string) => typeof flags[flag] === 'string' && q.set(param, flags[flag] as string);
  str('measurement', 'measurement');
  str('db', 'db');
  if (format === 'csv' || format === 'parquet') {
    str('time-column', 'time_column');
    str('time-format', 'time_format');
  }
  if (format === 'csv') {
    str('delimiter', 'delimiter');
    if (!q.has('delimiter') && /\.tsv(\.(gz|gzip|zst))?$/i.test(file)) q.set('delimiter', 'tab');
    str('skip-rows', 'skip_rows');
  }
  if (format === 'lp') str('precision', 'precision');
  const query = q.toString();
  return `/api/v1/import/${format}${query ? `?${query}` : ''}`;
}

/** `[#####-----]  50%  1.0 MB/2.0 MB  3.5 MB/s  120000 rows/s` (rows only when they can be counted while sending). */
export function uploadLine(sent: number, total: number, rows: number | null, seconds: number, width = 30): string {
  const ratio = total > 0 ? Math.min(1, sent / total) : 1;
  const filled = Math.round(ratio * width);
  const rate = seconds > 0 ? sent / seconds : 0;
  const rowRate = rows !== null && seconds > 0 ? `  ${Math.round(rows / seconds)} rows/s` : '';
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%  ${formatSize(sent)}/${formatSize(total)}  ${formatSize(rate)}/s${rowRate}`;
}

function fail(message: string, code = 1): number {
  process.stderr.write(`\nsvc import: ${message}\n`);
  return code;
}

/** Runs `svc import ...`; resolves to the exit code. */
export async function runImportCommand(args: ParsedArgs, env: Record<string, string | undefined> = process.env): Promise<number> {
  const [file] = args.positionals;
  if (!file) return fail(`a file is required\n${USAGE}`, 2);
  const source = Bun.file(file);
  if (!(await source.exists())) return fail(`cannot read ${file}: no such file`, 2);
  const flag = args.flags.format;
  const format = typeof flag === 'string' ? (FORMATS as readonly string[]).includes(flag) ? (flag as Format) : null : formatOf(file);
  if (!format) return fail(typeof flag === 'string' ? `unknown format '${flag}' (use ${FORMATS.join(', ')})` : `cannot guess the format of ${file} from its extension: pass --format ${FORMATS.join('|')}`, 2);
  if ((format === 'csv' || format === 'parquet') && typeof args.flags.measurement !== 'string') return fail(`--measurement is required for ${format} files\n${USAGE}`, 2);
  const url = (typeof args.flags.url === 'string' ? args.flags.url : 'http://127.0.0.1:8000').replace(/\/+$/, '');
  const token = typeof args.flags.token === 'string' ? args.flags.token : env.SVC_TOKEN;

  const total = source.size;
  const head = new Uint8Array(await source.slice(0, 2).arrayBuffer());
  // Rows are counted as line breaks while sending; impossible for Parquet and compressed files.
  const countRows = format !== 'parquet' && !(head[0] === 0x1f && head[1] === 0x8b) && !(head[0] === 0x28 && head[1] === 0xb5);
  const perRow = format === 'tle' ? 2 : 1;
  let sent = 0;
  let lines = 0;
  const started = performance.now();
  const draw = () => {
    const rows = countRows ? Math.floor(lines / perRow) : null;
    process.stderr.write(`\r${uploadLine(sent, total, rows, (performance.now() - started) / 1000)}`);
  };
  const ticker = setInterval(draw, 200);
  const body = source.stream().pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        sent += chunk.byteLength;
        if (countRows) for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
        controller.enqueue(chunk);
      },
    }),
  );
  const headers: Record<string, string> = {
    'content-type': format === 'csv' ? 'text/csv' : format === 'parquet' ? 'application/octet-stream' : 'text/plain',
    // A declared length lets the server stream the body to disk instead of buffering it.
    'content-length': String(total),
  };
  if (token) headers.authorization = `Bearer ${token}`;
  let res: Response;
  try {
    res = await fetch(url + importPath(format, args.flags, file), { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
  } catch (err) {
    clearInterval(ticker);
    return fail(`cannot reach ${url}: ${(err as Error).message}`);
  } finally {
    clearInterval(ticker);
  }
  draw();
  const text = await res.text();
  let parsed: { error?: string; result?: { rows_imported?: number; partitions_created?: number; database?: string; measurement?: string } } = {};
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = { error: text };
  }
  if (res.status !== 200) return fail(`import failed (${res.status}): ${parsed.error ?? text}`);
  const seconds = (performance.now() - started) / 1000;
  const r = parsed.result ?? {};
  process.stderr.write(
    `\nimported ${r.rows_imported} rows into ${r.database}.${r.measurement} (${r.partitions_created} hourly files) in ${seconds.toFixed(2)} s: ${Math.round(Number(r.rows_imported) / seconds)} rows/s\n`,
  );
  process.stdout.write(JSON.stringify(parsed, null, 2) + '\n');
  return 0;
}

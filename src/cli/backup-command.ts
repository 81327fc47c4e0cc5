/**
 * `svc backup create|list|restore <id>`: drives the backup routes of a running server (`--url`, default
 * http://127.0.0.1:8000; `--token` or env SVC_TOKEN) and draws a progress bar on stderr while polling
 * /api/v1/backup/status. Exit codes: 0 done, 1 the operation or a request failed, 2 usage.
 */
import { formatSize } from '../lib/sizes.ts';
import type { ParsedArgs } from './args.ts';

const USAGE = 'usage: svc backup create | list | restore <backup-id> --yes [--no-data] [--no-metadata] [--with-config]  [--url URL] [--token TOKEN]';

interface Client {
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
}

function client(args: ParsedArgs, env: Record<string, string | undefined>): Client {
  const url = (typeof args.flags.url === 'string' ? args.flags.url : 'http://127.0.0.1:8000').replace(/\/+$/, '');
  const token = typeof args.flags.token === 'string' ? args.flags.token : env.SVC_TOKEN;
  return {
    async call(method, path, body) {
      const headers: Record<string, string> = {};
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      let res: Response;
      try {
        res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      } catch (err) {
        throw new Error(`cannot reach ${url}: ${(err as Error).message}`);
      }
      const text = await res.text();
      let parsed: Record<string, unknown> = {};
      try {
        parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        parsed = { error: text };
      }
      return { status: res.status, body: parsed };
    },
  };
}

/** One progress line: `[#####-----]  50%  12/24 files  1.2 MB/2.4 MB`. */
export function progressLine(p: { operation?: unknown; total_files?: unknown; processed_files?: unknown; total_bytes?: unknown; processed_bytes?: unknown }, width = 30): string {
  const total = Number(p.total_bytes ?? 0);
  const done = Number(p.processed_bytes ?? 0);
  const ratio = total > 0 ? Math.min(1, done / total) : 0;
  const filled = Math.round(ratio * width);
  const pct = String(Math.floor(ratio * 100)).padStart(3);
  return `${String(p.operation ?? '')} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${pct}%  ${Number(p.processed_files ?? 0)}/${Number(p.total_files ?? 0)} files  ${formatSize(done)}/${formatSize(total)}`;
}

/** Polls /status until the operation on `id` is no longer running; returns its final record. */
async function follow(api: Client, id: string, out: NodeJS.WriteStream): Promise<Record<string, unknown>> {
  for (;;) {
    const st = (await api.call('GET', '/api/v1/backup/status')).body;
    if (st.backup_id === id) {
      out.write(`\r${progressLine(st)}`);
      if (st.status !== 'running') {
        out.write('\n');
        return st;
      }
    }
    await Bun.sleep(250);
  }
}

function fail(message: string, code = 1): number {
  process.stderr.write(`svc backup: ${message}\n`);
  return code;
}

/** Runs `svc backup ...`; resolves to the exit code. */
export async function runBackupCommand(args: ParsedArgs, env: Record<string, string | undefined> = process.env): Promise<number> {
  const [sub, id] = args.positionals;
  const api = client(args, env);
  try {
    if (sub === 'list') {
      const r = await api.call('GET', '/api/v1/backup');
      if (r.status !== 200) return fail(`cannot list backups: ${r.status} ${String(r.body.error ?? '')}`);
      for (const b of (r.body.backups as Record<string, unknown>[]) ?? [])
        process.stdout.write(`${String(b.backup_id)}  ${String(b.created_at)}  ${String(b.total_files)} files  ${formatSize(Number(b.total_bytes ?? 0))}\n`);
      return 0;
    }
    let started: { status: number; body: Record<string, unknown> };
    if (sub === 'create') started = await api.call('POST', '/api/v1/backup');
    else if (sub === 'restore') {
      if (!id) return fail(`restore needs a backup id\n${USAGE}`, 2);
      if (args.flags.yes !== true) return fail(`restore replaces the server's data and metadata; pass --yes to confirm`, 2);
      started = await api.call('POST', '/api/v1/backup/restore', {
        backup_id: id,
        restore_data: args.flags['no-data'] !== true,
        restore_metadata: args.flags['no-metadata'] !== true,
        restore_config: args.flags['with-config'] === true,
        confirm: true,
      });
    } else return fail(`unknown subcommand '${sub ?? ''}'\n${USAGE}`, 2);
    if (started.status !== 202) return fail(`cannot ${sub}: ${started.status} ${String(started.body.error ?? '')}`);
    const backupId = String(started.body.backup_id);
    const final = await follow(api, backupId, process.stderr);
    if (final.status !== 'completed') return fail(`${sub} of ${backupId} failed: ${String(final.error ?? final.status)}`);
    process.stdout.write(`${backupId}\n`);
    return 0;
  } catch (err) {
    return fail((err as Error).message);
  }
}

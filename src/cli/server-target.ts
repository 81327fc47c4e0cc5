/**
 * The server a client command talks to: `--url` (default http://127.0.0.1:8000) and the token from
 * `--token` or env SVC_TOKEN, and the server's error message out of a failed response.
 */
import type { ParsedArgs } from './args.ts';

/** Where to send requests, and the headers every request carries. */
export interface ServerTarget {
  url: string;
  headers: Record<string, string>;
}

/** The target named by the flags and environment. */
export function serverTarget(args: ParsedArgs, env: Record<string, string | undefined>): ServerTarget {
  const url = (typeof args.flags.url === 'string' ? args.flags.url : 'http://127.0.0.1:8000').replace(/\/+$/, '');
  const token = typeof args.flags.token === 'string' ? args.flags.token : env.SVC_TOKEN;
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (typeof args.flags.db === 'string') headers['x-svc-database'] = args.flags.db;
  return { url, headers };
}

/** `<status>: <server message>` of an error response. */
export async function serverError(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const msg = [body.error, body.message].filter((x) => typeof x === 'string' && x !== '');
    if (msg.length) return `${res.status}: ${[...new Set(msg)].join(': ')}`;
  } catch {
    // plain text body
  }
  return `${res.status}: ${text.trim() || res.statusText}`;
}

/** POSTs JSON; rejects with "cannot reach URL" when the server is not there. */
export async function postJson(target: ServerTarget, path: string, body: unknown): Promise<Response> {
  try {
    return await fetch(target.url + path, { method: 'POST', headers: { ...target.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } catch (err) {
    throw new Error(`cannot reach ${target.url}: ${(err as Error).message}`);
  }
}

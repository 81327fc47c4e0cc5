/**
 * Starts a real svc server as a child process (bun src/main.ts) on random ports in a temporary
 * working directory, and talks HTTP to it. Every end-to-end suite uses this; nothing is mocked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { jsonOrText } from './spawn.ts';

const ROOT = join(import.meta.dir, '..', '..');
const BUN = process.execPath;

/** A fixed admin token so tests need not scrape it (>= 32 characters, as the spec requires). */
export const ADMIN_TOKEN = 'svc_test_admin_token_0123456789abcdefghijklmnop';

export interface TestServer {
  url: string;
  memoryUrl: string;
  dir: string;
  proc: Subprocess<'ignore', 'pipe', 'pipe'>;
  /** Everything the process wrote to stderr and stdout so far. */
  output(): string;
  /** fetch against the time-series service with the admin token unless headers say otherwise. */
  fetch(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  /** SIGTERM and wait; returns the exit code. */
  stop(): Promise<number>;
  /** SIGKILL (a crash) and wait. */
  kill(): Promise<void>;
  /** Stops and removes the working directory (unless keepDir). */
  cleanup(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Reuse a working directory (restart scenarios). */
  dir?: string;
  args?: string[];
  keepDir?: boolean;
  /** Do not set SVC_AUTH_BOOTSTRAP_TOKEN. */
  noBootstrapToken?: boolean;
  /** Run this executable instead of `bun src/main.ts`. */
  executable?: string;
  /** Wait for /ready (default true). */
  waitReady?: boolean;
}

/** Starts a server and waits until it listens (and, by default, until /ready is 200). */
export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'svc-test-'));
  const cmd = opts.executable ? [opts.executable, ...(opts.args ?? [])] : [BUN, join(ROOT, 'src', 'main.ts'), ...(opts.args ?? [])];
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    SVC_SERVER_PORT: '0',
    SVC_MEMORY_PORT: '0',
    SVC_SERVER_HOST: '127.0.0.1',
    SVC_MEMORY_HOST: '127.0.0.1',
    SVC_NATIVE_CACHE_DIR: join(dir, '.native-cache'),
    ...(opts.noBootstrapToken ? {} : { SVC_AUTH_BOOTSTRAP_TOKEN: ADMIN_TOKEN }),
    ...opts.env,
  };
  const proc = Bun.spawn(cmd, { cwd: dir, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  let out = '';
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of stream) out += dec.decode(chunk, { stream: true });
  };
  void pump(proc.stdout);
  void pump(proc.stderr);

  const deadline = Date.now() + 30_000;
  let ports: RegExpExecArray | null = null;
  // The start line is text or JSON depending on log.format.
  const startLine = /svc started.*?timeseries_port"?[=:](\d+).*?memory_port"?[=:](\d+|null)/;
  while (!(ports = startLine.exec(out))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      await Bun.sleep(50);
      throw new Error(`server did not start (exit ${proc.exitCode}):\n${out}`);
    }
    await Bun.sleep(20);
  }
  const tls = env.SVC_SERVER_TLS_ENABLED === 'true';
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${ports[1]}`;
  const memoryUrl = `http://127.0.0.1:${ports[2]}`;
  const server: TestServer = {
    url,
    memoryUrl,
    dir,
    proc,
    output: () => out,
    fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      const token = init.token === undefined ? ADMIN_TOKEN : init.token;
      if (token !== null && !headers.has('authorization') && !headers.has('x-api-key')) headers.set('authorization', `Bearer ${token}`);
      return fetch(url + path, { ...init, headers, tls: { rejectUnauthorized: false } } as RequestInit);
    },
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      return await proc.exited;
    },
    async kill() {
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await proc.exited;
    },
    async cleanup() {
      await server.stop();
      if (!opts.keepDir && !opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  if (opts.waitReady !== false && !tls) {
    while ((await fetch(url + '/ready').catch(() => null))?.status !== 200) {
      if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`server never became ready:\n${out}`);
      await Bun.sleep(20);
    }
  }
  return server;
}

/** Sends a JSON body with the admin token (or `token`) and returns status and parsed body. */
export async function json(server: TestServer, method: string, path: string, body?: unknown, token?: string | null) {
  const res = await server.fetch(path, {
    method,
    token,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: jsonOrText(await res.text()), headers: res.headers };
}

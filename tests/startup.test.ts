import { describe, expect, test } from 'bun:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json, startServer } from './helpers/server.ts';

const MAIN = join(import.meta.dir, '..', 'src', 'main.ts');

function runCli(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const cwd = opts.cwd ?? mkdtempSync(join(tmpdir(), 'svc-cli-'));
  const p = Bun.spawnSync([process.execPath, MAIN, ...args], { cwd, env: { ...process.env, SVC_SERVER_PORT: '0', SVC_MEMORY_PORT: '0', ...opts.env } });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

describe('command line', () => {
  test('--version and version print the version', () => {
    for (const args of [['--version'], ['version']]) {
      const r = runCli(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^svc \d+\.\d+\.\d+/);
    }
  });

  test('an unknown command exits 2 with usage', () => {
    const r = runCli(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
  });

  test('bad config exits 2 with one line naming the key', () => {
    const r = runCli([], { env: { SVC_COMPACTION_MEMORY_LIMIT: '50%' } });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('compaction.memory_limit');
  });

  test('--config reads that file; unknown keys are warned about', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cfg-'));
    writeFileSync(join(dir, 'custom.toml'), '[server]\nhost = "127.0.0.1"\nshutdwn_timeout = "5s"\n[log]\nformat = "json"\n');
    const s = await startServer({ dir, args: ['serve', '--config', join(dir, 'custom.toml')] });
    expect(s.output()).toContain('unknown config key server.shutdwn_timeout');
    // log.format = json from the file: the start line is JSON.
    expect(s.output()).toMatch(/\{"time":"[^"]+","level":"info","msg":"svc started"/);
    await s.cleanup();
  });

  test('svc.toml in the working directory is found', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cfg-'));
    writeFileSync(join(dir, 'svc.toml'), '[log]\nformat = "json"\n');
    const s = await startServer({ dir });
    expect(s.output()).toMatch(/"msg":"svc started"/);
    await s.cleanup();
  });
});

describe('lifecycle', () => {
  test('with no config everything lives under ./data of the working directory', async () => {
    const s = await startServer({ keepDir: true });
    expect(await Bun.file(join(s.dir, 'data', 'svc.db')).exists()).toBe(true);
    await s.cleanup();
  });

  test('/health and /ready bodies', async () => {
    const s = await startServer();
    const health = await json(s, 'GET', '/health', undefined, null);
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', storage: { hot: { backend: 'local', credentials: 'ok' } } });
    expect(typeof health.body.uptime).toBe('string');
    expect(typeof health.body.uptime_sec).toBe('number');
    expect(Date.parse(health.body.time)).toBeGreaterThan(0);
    const ready = await json(s, 'GET', '/ready', undefined, null);
    expect(ready.status).toBe(200);
    expect(Object.keys(ready.body).sort()).toEqual(['status', 'time', 'uptime_sec']);
    const memHealth = await (await fetch(s.memoryUrl + '/health')).json();
    expect(memHealth).toMatchObject({ status: 'ok' });
    const memReady = await (await fetch(s.memoryUrl + '/ready')).json();
    expect(memReady).toMatchObject({ svc: 'connected' });
    await s.cleanup();
  });

  test('SIGTERM stops gracefully with exit 0 and logs it', async () => {
    const s = await startServer();
    expect(await s.stop()).toBe(0);
    expect(s.output()).toContain('svc stopped');
  });

  test('SIGINT stops gracefully too', async () => {
    const s = await startServer();
    s.proc.kill('SIGINT');
    expect(await s.proc.exited).toBe(0);
  });

  test('a body over server.max_payload_size is refused with 413 before it is read', async () => {
    const s = await startServer({ env: { SVC_SERVER_MAX_PAYLOAD_SIZE: '1KB' } });
    const res = await s.fetch('/api/v1/auth/tokens', { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(4096) });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toContain('max_payload_size');
    await s.cleanup();
  });
});

describe('TLS', () => {
  test('serves HTTPS with a self-signed certificate made here', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-tls-'));
    const gen = Bun.spawnSync(
      ['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '1', '-subj', '/CN=127.0.0.1'],
      { cwd: dir },
    );
    expect(gen.exitCode).toBe(0);
    const s = await startServer({
      dir,
      env: { SVC_SERVER_TLS_ENABLED: 'true', SVC_SERVER_TLS_CERT_FILE: join(dir, 'cert.pem'), SVC_SERVER_TLS_KEY_FILE: join(dir, 'key.pem') },
    });
    expect(s.url.startsWith('https://')).toBe(true);
    const res = await fetch(s.url + '/health', { tls: { rejectUnauthorized: false } } as RequestInit);
    expect(res.status).toBe(200);
    const plain = await fetch(s.url.replace('https', 'http') + '/health').catch((e: Error) => e);
    expect(plain instanceof Error || (plain as Response).status !== 200).toBe(true);
    await s.stop();
  });

  test('missing certificate files stop startup with a clear message', () => {
    const r = runCli([], { env: { SVC_SERVER_TLS_ENABLED: 'true', SVC_SERVER_TLS_CERT_FILE: '/nope/cert.pem' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('server.tls_cert_file');
  });
});

/**
 * One server per storage: a second server on the same data folder, bucket prefix or container prefix
 * exits 2 naming the holder; the lock goes away on shutdown; a stale lock is taken over with a warning.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AzureBackend } from '../src/storage/azure/azure-backend.ts';
import { startServer } from './helpers/server.ts';
import { startBackends } from './helpers/storage-backends.ts';

const backends = await startBackends('locks');
afterAll(() => backends.close());

const ROOT = join(import.meta.dir, '..');

/** Runs `svc serve` until it exits (it must, the storage being taken); exit code and output. */
async function runToExit(env: Record<string, string>): Promise<{ code: number; out: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
  try {
    const proc = Bun.spawn([process.execPath, join(ROOT, 'src', 'main.ts')], {
      cwd: dir,
      env: { ...(process.env as Record<string, string>), SVC_SERVER_PORT: '0', SVC_MEMORY_ENABLED: 'false', SVC_SERVER_HOST: '127.0.0.1', ...env },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
    const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    clearTimeout(timer);
    return { code, out: out + err };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('one server per storage', () => {
  for (const b of backends.all) {
    test(`${b.name}: a second server exits 2 naming the holder; after a clean stop the storage is free`, async () => {
      const env = b.env(`two-${b.name}`);
      const first = await startServer({ env });
      try {
        const second = await runToExit(env);
        expect(second.code).toBe(2);
        expect(second.out).toMatch(new RegExp(`the storage is in use by another server: \\S+:${first.proc.pid}:[0-9a-f]+ \\(host `));
      } finally {
        expect(await first.stop()).toBe(0);
        await first.cleanup();
      }
      // Released on shutdown: the next server starts at once, with no takeover.
      const next = await startServer({ env });
      try {
        expect(next.output()).not.toMatch(/taking over a stale storage lock/);
      } finally {
        await next.cleanup();
      }
    }, 60_000);
  }

  test('local: a lock whose heartbeat is older than its expiry is taken over with a warning', async () => {
    const data = join(backends.dir, 'stale');
    mkdirSync(data, { recursive: true });
    const old = new Date(Date.now() - 120_000).toISOString();
    const lock = join(data, '.svc.lock');
    writeFileSync(lock, JSON.stringify({ owner: 'elsewhere:42:dead', host: 'elsewhere', pid: 42, started_at: old, heartbeat_at: old, expiry_ms: 30_000 }));
    const s = await startServer({ env: { SVC_STORAGE_LOCAL_PATH: data } });
    try {
      expect(s.output()).toMatch(/taking over a stale storage lock.*elsewhere:42:dead/);
      expect(JSON.parse(readFileSync(lock, 'utf8')).pid).toBe(s.proc.pid);
    } finally {
      await s.cleanup();
    }
    expect(existsSync(lock)).toBe(false);
  }, 60_000);

  test('local: a live foreign lock is not taken over', async () => {
    const data = join(backends.dir, 'live');
    mkdirSync(data, { recursive: true });
    const now = new Date().toISOString();
    writeFileSync(join(data, '.svc.lock'), JSON.stringify({ owner: 'other-host:7:beef', host: 'other-host', pid: 7, started_at: now, heartbeat_at: now, expiry_ms: 600_000 }));
    const r = await runToExit({ SVC_STORAGE_LOCAL_PATH: data });
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/in use by another server: other-host:7:beef \(host other-host, pid 7/);
  }, 60_000);

  test('azure honours the lock\'s write conditions: create only when absent, replace only at the ETag read', async () => {
    const azure = new AzureBackend({ container: 'locks', connectionString: backends.azurite.connectionString, maxTries: 2 });
    const bytes = new TextEncoder().encode('{}');
    const created = await azure.putIf('cond/.svc.lock', bytes, { absent: true });
    expect(created?.etag).toBeTruthy();
    expect(await azure.putIf('cond/.svc.lock', bytes, { absent: true })).toBeNull();
    const replaced = await azure.putIf('cond/.svc.lock', bytes, { etag: created!.etag });
    expect(replaced?.etag).toBeTruthy();
    expect(await azure.putIf('cond/.svc.lock', bytes, { etag: created!.etag })).toBeNull();
  });
});

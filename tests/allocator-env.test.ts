/**
 * server.retain_freed_memory: `serve` restarts its own process image once with
 * MIMALLOC_PURGE_DELAY=-1 (same pid, same arguments), keeps a value the user set, and leaves the
 * environment alone when switched off; the restarted server serves writes and queries as usual.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from './helpers/server.ts';

const started: TestServer[] = [];
afterEach(async () => {
  while (started.length) await started.pop()!.cleanup();
});

/** The environment the kernel holds for `pid` now (after any execve). */
function environOf(pid: number): Map<string, string> {
  const vars = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(vars.map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]));
}

async function start(env: Record<string, string>): Promise<TestServer> {
  const s = await startServer({ env: { SVC_MEMORY_ENABLED: 'false', ...env } });
  started.push(s);
  return s;
}

describe.skipIf(process.platform !== 'linux')('server.retain_freed_memory', () => {
  test('on by default: the same process runs on with MIMALLOC_PURGE_DELAY=-1 and serves writes and queries', async () => {
    const s = await start({});
    const env = environOf(s.proc.pid);
    expect(env.get('MIMALLOC_PURGE_DELAY')).toBe('-1');
    // The restart kept the arguments the helper started it with.
    expect(readFileSync(`/proc/${s.proc.pid}/cmdline`, 'utf8').split('\0').some((a) => a.endsWith('src/main.ts'))).toBe(true);
    const w = await s.fetch('/write?db=alloc', { method: 'POST', body: 'm,h=a v=1 1700000000000000000\nm,h=b v=2 1700000000000000001' });
    expect(w.status).toBe(204);
    const q = await s.fetch('/api/v1/query', { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-database': 'alloc' }, body: JSON.stringify({ sql: 'SELECT count(*) AS n FROM m' }) });
    expect(q.status).toBe(200);
    expect(JSON.stringify(await q.json())).toContain('2');
    // The first image opened nothing before it was replaced: one start-up, one set of listeners.
    expect(s.output().match(/svc started/g)?.length ?? 0).toBe(1);
  });

  test('under the sampling profiler (bun --cpu-prof, whose SIGPWR used to kill the new image before it could handle it) the restart starts every time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-prof-'));
    try {
      for (let i = 0; i < 3; i++) {
        const s = await startServer({ env: { SVC_MEMORY_ENABLED: 'false' }, executable: process.execPath, args: ['--cpu-prof', `--cpu-prof-dir=${dir}`, join(import.meta.dir, '..', 'src', 'main.ts')] });
        started.push(s);
        expect(environOf(s.proc.pid).get('MIMALLOC_PURGE_DELAY')).toBe('-1');
        expect(await s.stop()).toBe(0);
      }
      expect(readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).length).toBe(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a value the user set is kept', async () => {
    const s = await start({ MIMALLOC_PURGE_DELAY: '250' });
    expect(environOf(s.proc.pid).get('MIMALLOC_PURGE_DELAY')).toBe('250');
  });

  test.skipIf(process.env.MIMALLOC_PURGE_DELAY !== undefined)('switched off: the environment is left as it was', async () => {
    const s = await start({ SVC_SERVER_RETAIN_FREED_MEMORY: 'false' });
    expect(environOf(s.proc.pid).has('MIMALLOC_PURGE_DELAY')).toBe(false);
  });
});

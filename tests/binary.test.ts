/**
 * The compiled executable runs alone: copied into an empty folder with no node_modules, it prints
 * its version, serves /ready once DuckDB answered and its embedded web console (the embedded native library extracted into
 * SVC_NATIVE_CACHE_DIR), and exits 0 on SIGTERM. Reuses dist/svc when it is newer than every source.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const repo = join(import.meta.dir, '..');
const built = join(repo, 'dist', 'svc');
const sourceGlobs = ['src/**/*', 'build.ts', 'package.json', 'package-lock.json', 'bun.lock'];

let dir: string;
let binary: string;

/** Newest modification time among the files the executable is built from. */
function newestSourceMtime(): number {
  let newest = 0;
  for (const pattern of sourceGlobs) {
    for (const file of new Bun.Glob(pattern).scanSync({ cwd: repo, absolute: true })) {
      newest = Math.max(newest, statSync(file).mtimeMs);
    }
  }
  return newest;
}

function ensureBuilt(): void {
  if (existsSync(built) && statSync(built).mtimeMs > newestSourceMtime()) return;
  const build = Bun.spawnSync([process.execPath, 'build.ts'], { cwd: repo, stdout: 'pipe', stderr: 'pipe' });
  if (build.exitCode !== 0) {
    throw new Error(`cannot build dist/svc (exit ${build.exitCode}): ${build.stderr.toString()}${build.stdout.toString()}`);
  }
}

/** A port that was free a moment ago; the OS picks it. */
function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = probe.port;
  probe.stop(true);
  if (port === undefined) throw new Error('cannot find a free port');
  return port;
}

/** The caller's environment without SVC_* settings, so only the test decides how svc runs. */
function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('SVC_')) env[key] = value;
  }
  return { ...env, SVC_NATIVE_CACHE_DIR: join(dir, 'native-cache'), ...extra };
}

async function status(url: string): Promise<number> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).status;
  } catch {
    return 0;
  }
}

beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'svc-binary-'));
  binary = join(dir, 'svc');
  copyFileSync(built, binary);
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('compiled executable, alone in an empty folder', () => {
  test('--version prints a version and exits 0', () => {
    const run = Bun.spawnSync([binary, '--version'], { cwd: dir, env: cleanEnv({}), stdout: 'pipe', stderr: 'pipe' });
    expect(run.exitCode).toBe(0);
    expect(run.stdout.toString()).toMatch(/\d+\.\d+\.\d+/);
  });

  test('serves /ready and /health, then exits 0 on SIGTERM', async () => {
    const serverPort = freePort();
    const memoryPort = freePort();
    const proc = Bun.spawn([binary, 'serve'], {
      cwd: dir,
      env: cleanEnv({ SVC_SERVER_PORT: String(serverPort), SVC_MEMORY_PORT: String(memoryPort) }),
      stdout: 'pipe',
      stderr: 'pipe',
    });
    // Drain both pipes so a chatty server never blocks on a full pipe.
    const stdout = new Response(proc.stdout).text();
    const stderr = new Response(proc.stderr).text();
    const output = async () => `stdout:\n${await stdout}\nstderr:\n${await stderr}`;
    try {
      const base = `http://127.0.0.1:${serverPort}`;
      const deadline = Date.now() + 30_000;
      while ((await status(`${base}/ready`)) !== 200) {
        if (proc.exitCode !== null) throw new Error(`svc exited with ${proc.exitCode} before /ready:\n${await output()}`);
        if (Date.now() > deadline) throw new Error('svc was not ready within 30 s');
        await Bun.sleep(100);
      }
      expect(await status(`${base}/health`)).toBe(200);
      // The executable restarted its own image with the allocator setting (server.retain_freed_memory).
      if (process.platform === 'linux' && process.env.MIMALLOC_PURGE_DELAY === undefined) expect(readFileSync(`/proc/${proc.pid}/environ`, 'utf8')).toContain('MIMALLOC_PURGE_DELAY=-1');
      // The web console is embedded, bundled at build time: there is no source folder here to bundle from.
      const script = await fetch(`${base}/console/assets/app.js`);
      expect(script.status).toBe(200);
      expect(await script.text()).toContain('uplot');
      // The DuckDB library came from the cache folder the test chose, not from ~/.cache.
      const cached = readdirSync(join(dir, 'native-cache'));
      expect(cached.some((name) => name.startsWith('duckdb-'))).toBe(true);

      proc.kill('SIGTERM');
      const exited = await Promise.race([proc.exited, Bun.sleep(10_000).then(() => 'timeout' as const)]);
      if (exited === 'timeout') throw new Error(`svc did not exit within 10 s of SIGTERM:\n${await output()}`);
      if (exited !== 0) throw new Error(`svc exited with ${exited} after SIGTERM:\n${await output()}`);
      expect(existsSync(join(dir, 'data'))).toBe(true);
      // The executable compiles its in-place result reader too (src/duckdb/result-chunks.ts).
      if (process.platform === 'linux' && process.arch === 'x64') expect(await output()).toContain('query_results="read in place"');
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
  }, 60_000);
});

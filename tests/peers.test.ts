/** A suite whose peer program is missing skips locally but fails under CI (tests/helpers/peers.ts, tests/helpers/ci.ts). */
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'svc-peers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'missing-peer.test.ts');
writeFileSync(file, `import { peerMissing } from ${JSON.stringify(join(import.meta.dir, 'helpers', 'peers.ts'))};\npeerMissing('a suite', 'frobnicator is not installed');\n`);

function runSuite(ci: string | undefined) {
  const env = { ...process.env, CI: ci } as Record<string, string>;
  if (ci === undefined) delete env.CI;
  const p = Bun.spawnSync([process.execPath, 'test', file], { cwd: dir, env, stdout: 'pipe', stderr: 'pipe' });
  return { code: p.exitCode, out: p.stderr.toString() + p.stdout.toString() };
}

test('a missing peer fails the run under CI (CI=true or CI=1) and only skips without it', () => {
  for (const value of ['true', '1']) {
    const ci = runSuite(value);
    expect({ CI: value, failed: ci.code !== 0 }).toEqual({ CI: value, failed: true });
    expect(ci.out).toContain('frobnicator is not installed');
  }
  for (const value of [undefined, 'false']) {
    const local = runSuite(value);
    expect({ CI: value, code: local.code }).toEqual({ CI: value, code: 0 });
    expect(local.out).toContain('1 skip');
  }
}, 30_000);

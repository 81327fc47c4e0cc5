import { expect, test } from 'bun:test';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..');

test('the whole codebase typechecks (tsc --noEmit)', () => {
  const tsc = join(ROOT, 'node_modules', '.bin', 'tsc');
  const r = Bun.spawnSync([tsc, '--noEmit', '-p', ROOT], { cwd: ROOT });
  const out = r.stdout.toString() + r.stderr.toString();
  expect(out).toBe('');
  expect(r.exitCode).toBe(0);
});

test('the console page typechecks against the DOM (its own tsconfig)', () => {
  const tsc = join(ROOT, 'node_modules', '.bin', 'tsc');
  const r = Bun.spawnSync([tsc, '--noEmit', '-p', join(ROOT, 'src', 'console', 'page')], { cwd: ROOT });
  expect(r.stdout.toString() + r.stderr.toString()).toBe('');
  expect(r.exitCode).toBe(0);
});

import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dir, '..', '..', '..');

test('the release build compiles the crash hook out (build.ts defines SVC_TEST_HOOKS = false)', async () => {
  expect(readFileSync(join(root, 'build.ts'), 'utf8')).toContain("define: { SVC_TEST_HOOKS: 'false' }");
  const build = async (define: Record<string, string>) => {
    const out = await Bun.build({ entrypoints: [join(import.meta.dir, 'crash-hook.ts')], minify: { syntax: true, whitespace: true }, define });
    return out.outputs[0]!.text();
  };
  // The same source keeps the hook in test runs, so the check below can fail.
  expect(await build({})).toContain('SIGKILL');
  expect(await build({ SVC_TEST_HOOKS: 'false' })).not.toContain('SIGKILL');
});

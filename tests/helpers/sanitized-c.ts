/**
 * Runs a C test harness built with AddressSanitizer and UndefinedBehaviorSanitizer over a corpus
 * file, for the rule that every native routine also runs under a sanitizer in the tests. The harness
 * takes `<corpus> <out>` and writes its results to `out`; any sanitizer report fails the test.
 */
import { expect } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Builds `harnessC` under the sanitizers, runs it over `corpus` and returns what it wrote. */
export function runSanitized(harnessC: string, corpus: Uint8Array): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'svc-asan-'));
  try {
    const harness = join(dir, 'harness');
    // Unaligned 8-byte loads and moves are the C's fast paths, allowed on x86-64 and arm64 (TinyCC would
    // turn memcpy into a call); type punning needs -fno-strict-aliasing, as TinyCC never assumes it.
    const cc = Bun.spawnSync(['cc', '-std=gnu11', '-O1', '-g', '-fsanitize=address,undefined', '-fno-sanitize-recover=all', '-fno-sanitize=alignment', '-fno-strict-aliasing', '-o', harness, harnessC], { stderr: 'pipe' });
    expect(cc.stderr.toString()).toBe('');
    expect(cc.exitCode).toBe(0);
    writeFileSync(join(dir, 'corpus'), corpus);
    const run = Bun.spawnSync([harness, join(dir, 'corpus'), join(dir, 'out')], { stderr: 'pipe', env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=0', UBSAN_OPTIONS: 'print_stacktrace=1' } });
    expect(run.stderr.toString()).toBe('');
    expect(run.exitCode).toBe(0);
    return readFileSync(join(dir, 'out'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

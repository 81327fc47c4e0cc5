/**
 * TEST-ONLY crash injection. When `compaction.test_crash_at` (env SVC_COMPACTION_TEST_CRASH_AT) names a step, the process kills
 * itself with SIGKILL when a merge reaches that step, so end-to-end tests can prove that a crash at
 * any point leaves either the inputs or the output registered. Unset (always, in production) it does
 * nothing; release builds define SVC_TEST_HOOKS = false (build.ts) and the minifier drops the hook.
 * Steps, in order:
 * - `after_manifest`: the merge manifest is committed, nothing written yet
 * - `after_write`: the output is written to scratch, not yet in storage
 * - `after_put`: the output is in storage, the file manifest still lists the inputs
 * - `after_swap`: the file manifest lists the output, the merge manifest is not yet cleared
 */
export const CRASH_STEPS = ['after_manifest', 'after_write', 'after_put', 'after_swap'] as const;
export type CrashStep = (typeof CRASH_STEPS)[number];

declare const SVC_TEST_HOOKS: boolean | undefined;

/** A function that kills the process at `step` when `at` (compaction.test_crash_at) names it. */
export function crashHook(at: string): (step: CrashStep) => void {
  if (typeof SVC_TEST_HOOKS !== 'undefined' && !SVC_TEST_HOOKS) return () => {};
  if (!at || !(CRASH_STEPS as readonly string[]).includes(at)) return () => {};
  return (step) => {
    if (step === at) process.kill(process.pid, 'SIGKILL');
  };
}

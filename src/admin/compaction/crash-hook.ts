/**
 * TEST-ONLY crash injection. When env `SVC_COMPACTION_TEST_CRASH_AT` names a step, the process kills
 * itself with SIGKILL when a merge reaches that step, so end-to-end tests can prove that a crash at
 * any point leaves either the inputs or the output registered. Unset (always, in production) it does
 * nothing. Steps, in order:
 * - `after_manifest`: the merge manifest is committed, nothing written yet
 * - `after_write`: the output is written to scratch, not yet in storage
 * - `after_put`: the output is in storage, the file manifest still lists the inputs
 * - `after_swap`: the file manifest lists the output, the merge manifest is not yet cleared
 */
export const CRASH_STEPS = ['after_manifest', 'after_write', 'after_put', 'after_swap'] as const;
export type CrashStep = (typeof CRASH_STEPS)[number];

/** A function that kills the process at `step` when `env.SVC_COMPACTION_TEST_CRASH_AT` names it. */
export function crashHook(env: Record<string, string | undefined>): (step: CrashStep) => void {
  const at = env.SVC_COMPACTION_TEST_CRASH_AT;
  if (!at || !(CRASH_STEPS as readonly string[]).includes(at)) return () => {};
  return (step) => {
    if (step === at) process.kill(process.pid, 'SIGKILL');
  };
}

/**
 * Crash points for tests that must kill a process between two exact steps (etcd's and TiKV's
 * failpoint habit). `SVC_FAILPOINT=name:n[,name:n]` kills the process with SIGKILL the n-th time
 * `failpoint(name)` runs (n defaults to 1); without the variable every call is a no-op.
 * An entry `name@subject` instead makes `failpointError(name, subject)` throw every time: a failure
 * that is deterministic for that subject (e.g. `flush.write@m`: every flush of measurement m fails).
 */
const armed = parse(process.env.SVC_FAILPOINT ?? '');
const hits = new Map<string, number>();

function parse(spec: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of spec.split(',')) {
    const [name, n] = part.trim().split(':');
    if (name) out.set(name, Math.max(1, Number(n ?? 1) || 1));
  }
  return out;
}

/** Kills this process at once (no clean-up, as kill -9 does) when `name` is armed and reached its count. */
export function failpoint(name: string): void {
  const at = armed.get(name);
  if (at === undefined) return;
  const n = (hits.get(name) ?? 0) + 1;
  hits.set(name, n);
  if (n === at) process.kill(process.pid, 'SIGKILL');
}

/** Throws every time when `name@subject` is armed (see the module comment); otherwise a no-op. */
export function failpointError(name: string, subject: string): void {
  if (armed.size === 0) return;
  if (armed.has(`${name}@${subject}`)) throw new Error(`failpoint ${name}@${subject}: a failure armed for tests`);
}

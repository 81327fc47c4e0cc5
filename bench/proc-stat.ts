/**
 * What the benchmarks read of a process from Linux's /proc: CPU time and minor page faults, of the
 * whole process or of one thread (the event loop is the main thread: its thread id is the pid).
 * CPU per row is the figure a shared machine disturbs least: waiting for a core costs wall time, not CPU time.
 */
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's times. */
const CLOCK_TICKS = 100;

/** /proc/<pid>/stat, or thread `tid`'s, from its third field (the state) on. */
function statFields(pid: number, tid?: number): string[] {
  const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU seconds used so far: every thread of `pid`, or thread `tid` alone. */
export function cpuSeconds(pid: number, tid?: number): number {
  const f = statFields(pid, tid);
  return (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
}

/** Minor page faults taken so far: every thread of `pid`, or thread `tid` alone. */
export function minorFaults(pid: number, tid?: number): number {
  return Number(statFields(pid, tid)[7]);
}

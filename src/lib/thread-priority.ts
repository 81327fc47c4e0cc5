/**
 * Per-thread scheduling priority (Linux nice values), for background threads that must not take the
 * core the event loop needs. The event loop is the one serial step of ingest (it receives, parses
 * and buffers every write), while a flush worker's Parquet encoding can run whenever a core is free:
 * at equal priority the kernel shares the cores evenly between them (and the load clients), so the
 * event loop waits for its turn while a flush encodes. A higher nice value for the flush workers lets
 * the event loop run first; they use the CPU it leaves, and when they fall behind the flush queue
 * applies its usual backpressure. Linux only, through libc by bun:ffi; elsewhere it does nothing.
 */
import { dlopen, FFIType } from 'bun:ffi';

const PRIO_PROCESS = 0;

interface Libc {
  gettid(): number;
  getpriority(which: number, who: number): number;
  setpriority(which: number, who: number, prio: number): number;
}

let libc: Libc | null | undefined;

function load(): Libc | null {
  if (process.platform !== 'linux') return null;
  try {
    const lib = dlopen('libc.so.6', {
      gettid: { args: [], returns: FFIType.i32 },
      getpriority: { args: [FFIType.i32, FFIType.u32], returns: FFIType.i32 },
      setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
    });
    return lib.symbols as unknown as Libc;
  } catch {
    return null;
  }
}

/** The kernel's id of the calling thread (Linux), or null where it cannot be read. */
export function currentThreadId(): number | null {
  if (libc === undefined) libc = load();
  return libc === null ? null : libc.gettid();
}

/**
 * Runs thread `tid` of this process `steps` nice values below the calling thread (at most nice 19;
 * Linux: PRIO_PROCESS with a thread id affects that thread only). Returns null when done, else why
 * not (not Linux, no libc, refused by the kernel).
 */
export function lowerThreadPriority(tid: number, steps: number): string | null {
  if (libc === undefined) libc = load();
  if (libc === null) return `thread priorities are not supported on ${process.platform}`;
  const nice = Math.min(19, libc.getpriority(PRIO_PROCESS, 0) + steps);
  return libc.setpriority(PRIO_PROCESS, tid, nice) === 0 ? null : `setpriority(${tid}, ${nice}) was refused`;
}

/**
 * Bun's allocator (mimalloc) hands freed memory back to the OS after a short delay, and reads its
 * settings from the environment once, before any JavaScript runs; it exports no call to change them
 * later. On the VMs we measure on, touching memory the OS took back costs a page fault per page
 * (about 3 ms of kernel time per fresh 4 MB), and ingest frees and reuses tens of MB every second:
 * with `MIMALLOC_PURGE_DELAY=-1` (keep freed memory for reuse) remote write took half the CPU per
 * sample, and MessagePack and line-protocol ingest 1.6x and 1.4x the throughput (README, Benchmarks).
 * So `serve` sets it for itself: it replaces its own process image once at start (execve of
 * /proc/self/exe with the same arguments, same pid, same open descriptors), before it opened any
 * file, socket or worker. The cost is resident memory staying near its peak instead of shrinking.
 */
import { dlopen, FFIType, ptr, type Pointer } from 'bun:ffi';
import { readFileSync } from 'node:fs';

/** What the allocator is told; a value the user set is never replaced. */
export const RETAIN_FREED_MEMORY: Readonly<Record<string, string>> = { MIMALLOC_PURGE_DELAY: '-1' };

/** Linux's SIGPWR (x86-64 and arm64) and SIG_IGN. */
const SIGPWR = 30;
const SIG_IGN = 1 as unknown as Pointer;

/** A NUL-terminated copy of `s`, as C wants its strings. */
function cString(s: string): Buffer {
  return Buffer.from(`${s}\0`, 'utf8');
}

/** A NULL-terminated array of pointers to `strings` (which the caller keeps alive across the call). */
function pointerArray(strings: Buffer[]): BigUint64Array {
  const out = new BigUint64Array(strings.length + 1);
  strings.forEach((s, i) => (out[i] = BigInt(ptr(s))));
  return out;
}

/**
 * Restarts this process image with `extra` added to its environment, when any of `extra` is missing
 * from it. Returns only when nothing had to change (null) or the restart was impossible (the reason,
 * for the caller to log; the process then goes on as it is). Linux only: it needs /proc/self.
 */
export function restartWithEnv(extra: Readonly<Record<string, string>>): string | null {
  const missing = Object.keys(extra).filter((k) => process.env[k] === undefined);
  if (missing.length === 0) return null;
  if (process.platform !== 'linux') return `cannot set ${missing.join(', ')} for this process on ${process.platform} (set it in the environment that starts svc)`;
  let argv: string[];
  try {
    // The arguments exactly as the kernel received them (process.argv is rewritten by Bun in a compiled executable).
    argv = readFileSync('/proc/self/cmdline', 'latin1').split('\0');
    if (argv.at(-1) === '') argv.pop();
  } catch (err) {
    return `cannot read /proc/self/cmdline: ${(err as Error).message}`;
  }
  const env = { ...process.env, ...Object.fromEntries(missing.map((k) => [k, extra[k]!])) };
  const path = cString('/proc/self/exe');
  const args = argv.map(cString);
  const vars = Object.entries(env).flatMap(([k, v]) => (v === undefined ? [] : [cString(`${k}=${v}`)]));
  let libc;
  try {
    libc = dlopen('libc.so.6', {
      execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
      signal: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.ptr },
    });
  } catch (err) {
    return `cannot load libc.so.6 to restart with ${missing.join(', ')}: ${(err as Error).message}`;
  }
  const argvPtrs = pointerArray(args);
  const envPtrs = pointerArray(vars);
  // JavaScriptCore suspends threads with SIGPWR (its sampling profiler under --cpu-prof does so many
  // times a second). A handler does not survive execve, but a pending signal does: the new image would
  // die of it before installing its own. Ignored, it is dropped; the new image installs its handler.
  const previous = libc.symbols.signal(SIGPWR, SIG_IGN);
  // Returns only on failure; on success this process image is gone.
  libc.symbols.execve(ptr(path), ptr(argvPtrs), ptr(envPtrs));
  libc.symbols.signal(SIGPWR, previous); // null is SIG_DFL
  libc.close();
  return `execve of /proc/self/exe failed; running without ${missing.join(', ')}`;
}

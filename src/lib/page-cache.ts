/**
 * Drops written file pages from the operating system's page cache (posix_fadvise DONTNEED), for
 * files svc writes once and does not read back through the kernel: data files (queries read them
 * through DuckDB's own external file cache) and WAL segments (read only by a replay after a crash).
 * Their cached pages mostly crowd out memory, and dropping them keeps the kernel reusing the same
 * few recently freed pages for the next writes instead of taking fresh ones: on a virtual machine
 * the first touch of a fresh page costs ~10 µs (2.5 s of CPU per GB measured here), which made the
 * kernel's share of writing flush files about a quarter of all ingest CPU.
 *
 * Linux only, through libc by bun:ffi; anywhere it cannot load, it does nothing.
 */
import { dlopen, FFIType } from 'bun:ffi';
import { open } from 'node:fs/promises';

const POSIX_FADV_DONTNEED = 4;

type Fadvise = (fd: number, offset: number, length: number, advice: number) => number;

let fadvise: Fadvise | null | undefined;

function load(): Fadvise | null {
  if (process.platform !== 'linux') return null;
  try {
    const lib = dlopen('libc.so.6', { posix_fadvise: { args: [FFIType.i32, FFIType.i64, FFIType.i64, FFIType.i32], returns: FFIType.i32 } });
    return lib.symbols.posix_fadvise as Fadvise;
  } catch {
    return null;
  }
}

/**
 * Asks the kernel to drop the cached pages of open file `fd` (`length` bytes from `offset`; 0: to the
 * end). Only clean pages go, so call it after fsync. True when the kernel accepted the advice.
 */
export function dropCachedPages(fd: number, offset = 0, length = 0): boolean {
  if (fadvise === undefined) fadvise = load();
  return fadvise !== null && fadvise(fd, offset, length, POSIX_FADV_DONTNEED) === 0;
}

/**
 * fsync a file or folder so a rename or a write survives power loss (off the JS thread: it can take
 * milliseconds); `dropPages`: then drop the file's now clean pages from the page cache.
 */
export async function syncFile(path: string, dropPages = false): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
    if (dropPages) dropCachedPages(fh.fd);
  } finally {
    await fh.close();
  }
}

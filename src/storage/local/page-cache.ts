/**
 * Drops a written file's pages from the operating system's page cache (posix_fadvise DONTNEED).
 *
 * Data files are written once and then read through DuckDB's own external file cache, so their
 * pages in the kernel's cache mostly crowd out memory. Dropping them also keeps the kernel reusing
 * the same few recently freed pages for the next writes instead of taking fresh ones: on a virtual
 * machine the first touch of a fresh page costs ~10 µs (2.5 s of CPU per GB measured here), which
 * made the kernel's share of writing flush files about a quarter of all ingest CPU.
 *
 * Linux only, through libc by bun:ffi; anywhere it cannot load, it does nothing.
 */
import { dlopen, FFIType } from 'bun:ffi';

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
 * Asks the kernel to drop the cached pages of open file `fd`; only clean pages go, so call it after
 * fsync. True when the kernel accepted the advice.
 */
export function dropCachedPages(fd: number): boolean {
  if (fadvise === undefined) fadvise = load();
  return fadvise !== null && fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) === 0;
}

/**
 * The on-disk cache for native files the executable carries. The dynamic linker can only map real
 * files, not the executable's embedded filesystem, so each file is written out once per DuckDB
 * version and reused by every later start.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** One native file embedded zstd-compressed in the executable. */
export interface EmbeddedFile {
  /** Name on disk; the addon's RUNPATH ($ORIGIN) finds its libraries by this name in the same folder. */
  name: string;
  /** Where the compressed bytes live inside the executable (a /$bunfs/ path). */
  embeddedPath: string;
  /** Uncompressed size in bytes: a cached copy of another size is incomplete and gets replaced. */
  size: number;
}

/** Root of the native cache: SVC_NATIVE_CACHE_DIR, else $XDG_CACHE_HOME/svc, else ~/.cache/svc. */
export function nativeCacheRoot(env: Record<string, string | undefined> = process.env): string {
  if (env.SVC_NATIVE_CACHE_DIR) return resolve(env.SVC_NATIVE_CACHE_DIR);
  // The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored.
  if (env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)) return join(env.XDG_CACHE_HOME, 'svc');
  const home = env.HOME || homedir();
  if (home && home !== '/') return join(home, '.cache', 'svc');
  // Service users often have no home; a per-user folder in tmp still beats failing to start.
  return join(tmpdir(), `svc-cache-${process.getuid?.() ?? 'user'}`);
}

/** Writes each file into dir unless a copy of the right size is already there; returns how many it wrote. */
export function extractMissing(dir: string, files: readonly EmbeddedFile[]): number {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  assertOwnedBySelfOrRoot(dir);
  let written = 0;
  for (const file of files) {
    const target = join(dir, file.name);
    if (sizeOf(target) === file.size) continue;
    const bytes = Bun.zstdDecompressSync(readFileSync(file.embeddedPath));
    if (bytes.length !== file.size) {
      throw new Error(`embedded ${file.name} is ${bytes.length} bytes after decompression, expected ${file.size}: the executable is damaged`);
    }
    writeAtomically(target, bytes);
    written++;
  }
  return written;
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return -1;
  }
}

/**
 * Temp name + fsync + rename: a crash never leaves a truncated library under the final name, two
 * processes starting at once both succeed, and a process that already mapped the old file keeps its
 * inode (overwriting a mapped library in place would crash it).
 */
function writeAtomically(target: string, bytes: Uint8Array): void {
  const temp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const fd = openSync(temp, 'wx', 0o755);
  try {
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    unlinkSync(temp);
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(temp, target);
  } catch (err) {
    unlinkSync(temp);
    throw err;
  }
}

/** Code we dlopen must not come from a folder another user could have planted files in (e.g. in /tmp). */
function assertOwnedBySelfOrRoot(dir: string): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const owner = statSync(dir).uid;
  if (owner !== uid && owner !== 0) throw new Error(`${dir} is owned by uid ${owner}, not by this user (uid ${uid})`);
}

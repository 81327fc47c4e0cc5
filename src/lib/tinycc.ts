/**
 * C compiled at start by Bun's built-in TinyCC (bun:ffi `cc`), for the few hot loops where
 * JavaScript's per-value cost dominates. TinyCC reads its source from a file, so the source goes to
 * a private temporary folder that is removed once the code is in memory.
 */
import { cc, type FFIFunction } from 'bun:ffi';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Compiles `source` and returns its exported `symbols`; throws when TinyCC is missing or the code does not compile. */
export function compileC<S extends Record<string, FFIFunction>>(name: string, source: string, symbols: S) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cc-'));
  try {
    const file = join(dir, `${name}.c`);
    writeFileSync(file, source);
    return cc({ source: file, symbols }).symbols;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A loader of native code run once, on first use: its value, or null when `SVC_NATIVE_RESULTS=0` or
 * when loading throws (no TinyCC, another platform). Callers keep a JavaScript path giving the same results.
 */
export function nativeOnce<T>(load: () => T | null): () => T | null {
  let loaded: T | null | undefined;
  return () => {
    if (loaded === undefined) {
      try {
        loaded = process.env.SVC_NATIVE_RESULTS === '0' ? null : load();
      } catch {
        loaded = null;
      }
    }
    return loaded;
  };
}

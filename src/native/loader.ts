/**
 * The one loader of native code: C files of this folder, compiled at start by Bun's built-in TinyCC
 * (bun:ffi `cc`) for the few hot loops where JavaScript's per-value cost dominates. Every native
 * routine has a TypeScript twin giving the same bytes (tests/native-twins.test.ts), so native code
 * is only ever a speed-up: it can be switched off (`query.native_encoders = false`), and a failure
 * to load is logged once, with its reason, and leaves the TypeScript path.
 *
 * The sources are imported as text (`with { type: 'text' }`), so the single executable carries them;
 * TinyCC reads its source from a file, so each goes to a private temporary folder that is removed
 * once the code is in memory.
 */
import { cc, type FFIFunction } from 'bun:ffi';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let enabled = true;
/** Routines switched off by name while the rest stay on (bench:query measures each alone). */
let off = new Set<string>();
let warn: (message: string) => void = (message) => process.stderr.write(`svc: ${message}\n`);

/**
 * Applies `query.native_encoders` (and, for measurements, routines to leave off by name) and where
 * to log a failed load. Takes effect for every result started afterwards.
 */
export function configureNative(options: { enabled: boolean; off?: readonly string[]; warn?: (message: string) => void }): void {
  enabled = options.enabled;
  off = new Set(options.off ?? []);
  if (options.warn) warn = options.warn;
}

/** Whether native routines may be used (`query.native_encoders`). */
export function nativeAllowed(): boolean {
  return enabled;
}

/** Compiles `source` (the text of a C file of this folder) and returns its exported `symbols`; throws when it cannot. */
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
 * A native routine loaded once, on first use: its value, or null when native code is switched off or
 * loading failed (then `warn` says why, once). `load` may return null for an expected absence (another
 * platform); it throws for a failure worth a log line.
 */
export function nativeOnce<T>(name: string, load: () => T | null): () => T | null {
  let loaded: T | null | undefined;
  return () => {
    if (!enabled || off.has(name)) return null;
    if (loaded !== undefined) return loaded;
    try {
      loaded = load();
    } catch (err) {
      loaded = null;
      nativeFailed(name, err);
    }
    return loaded;
  };
}

const reported = new Set<string>();

/** Logs, once per routine, why native code is not used; the TypeScript twin carries on. */
export function nativeFailed(name: string, err: unknown): void {
  if (reported.has(name)) return;
  reported.add(name);
  warn(`native ${name} not used, the TypeScript path gives the same results: ${err instanceof Error ? err.message : String(err)}`);
}

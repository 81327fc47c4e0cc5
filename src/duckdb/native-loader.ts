/**
 * Loads the DuckDB addon that build.ts embeds in the executable. In the compiled build, the module
 * `@duckdb/node-bindings` is replaced by a few generated lines that call loadEmbeddedAddon(); when
 * running from source, node_modules is used as is and nothing here runs.
 */
import { join } from 'node:path';
import { type EmbeddedFile, extractMissing, nativeCacheRoot } from './native-cache.ts';

/** What build.ts embeds for the host platform. */
export interface EmbeddedAddon {
  /** @duckdb/node-bindings version: the cache folder's key, so upgrades never mix libraries. */
  version: string;
  /** Platform package suffix, e.g. "linux-x64" or "linux-arm64-musl". */
  target: string;
  /** Name of the .node file among `files`. */
  addon: string;
  /** The addon and the shared libraries it links, all extracted into one folder. */
  files: readonly EmbeddedFile[];
}

/** Where and how the embedded addon was loaded, for startup logs. */
export interface NativeLoadInfo {
  dir: string;
  /** Number of files written on this start (0 once the cache is warm). */
  extracted: number;
  ms: number;
}

let loaded: NativeLoadInfo | undefined;

/**
 * Extracts the embedded addon once per version and dlopens it; returns the addon's exports. On
 * failure prints one line and exits 2: this runs while the static imports are evaluated, before
 * main.ts can catch anything, and a stack trace would bury the one actionable line.
 */
export function loadEmbeddedAddon(embedded: EmbeddedAddon): object {
  try {
    return load(embedded);
  } catch (err) {
    process.stderr.write(`svc: cannot start: ${messageOf(err)}\n`);
    process.exit(2);
  }
}

function load(embedded: EmbeddedAddon): object {
  const started = performance.now();
  const dir = join(nativeCacheRoot(), `duckdb-${embedded.version}-${embedded.target}`);
  let extracted: number;
  try {
    extracted = extractMissing(dir, embedded.files);
  } catch (err) {
    throw new Error(`cannot extract the DuckDB native library to ${dir}: ${messageOf(err)} (set SVC_NATIVE_CACHE_DIR to a writable folder)`);
  }
  const addon = { exports: {} };
  try {
    process.dlopen(addon, join(dir, embedded.addon));
  } catch (err) {
    throw new Error(`cannot load the DuckDB native library from ${dir}: ${messageOf(err)} (delete that folder to extract it again)`);
  }
  loaded = { dir, extracted, ms: performance.now() - started };
  return addon.exports;
}

/** How the embedded addon was loaded; undefined when DuckDB came from node_modules (running from source). */
export function nativeLoadInfo(): NativeLoadInfo | undefined {
  return loaded;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

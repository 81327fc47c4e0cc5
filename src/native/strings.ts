/**
 * The string and value copies of strings.c (twins: stringTotal and copyStrings in
 * src/duckdb/raw-vector.ts). Addresses are plain numbers: DuckDB's memory, or any the caller owns.
 */
import { nativeOnce, compileC } from './loader.ts';
import { C_SOURCES } from './sources.ts';

export interface NativeStrings {
  /** Copies `n` bytes at address `src` into `dest` at byte `at`. */
  copy(dest: Uint8Array, at: number, src: number, n: number): void;
  /** Bytes of the valid strings among `rows` 16-byte string headers at `headers` (validity 0: all valid). */
  stringTotal(headers: number, validity: number, rows: number): number;
  /** The strings in Arrow's layout (see ResultChunk.copyStrings); returns the new end. */
  strings(headers: number, validity: number, rows: number, offsets: Int32Array, at: number, base: number, data: Uint8Array): number;
}

/** The compiled copies, or null (native code off, or no compiler): the TypeScript twins give the same bytes. */
export const nativeStrings = nativeOnce('string copier', (): NativeStrings => {
  const s = compileC('strings', C_SOURCES.strings, {
    svc_copy: { args: ['ptr', 'u64', 'ptr', 'u64'], returns: 'void' },
    svc_string_total: { args: ['ptr', 'ptr', 'u64'], returns: 'u64' },
    svc_strings: { args: ['ptr', 'ptr', 'u64', 'ptr', 'u64', 'u64', 'ptr'], returns: 'u64' },
  });
  return {
    copy: (dest, at, src, n) => s.svc_copy(dest, at, src as never, n),
    stringTotal: (headers, validity, rows) => Number(s.svc_string_total(headers as never, validity as never, rows)),
    strings: (headers, validity, rows, offsets, at, base, data) => Number(s.svc_strings(headers as never, validity as never, rows, offsets, at, base, data)),
  };
});

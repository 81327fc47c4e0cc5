/**
 * Snappy block decompression by snappy.c (twin: `inflate` in src/ingest/prom/snappy.ts, which gives
 * the same bytes and refuses the same input for the same reason: tests/native-snappy.test.ts).
 */
import { compileC, nativeOnce } from './loader.ts';
import { C_SOURCES } from './sources.ts';

/** Why snappy.c refused a body, by minus its return value. */
export const SNAPPY_ERRORS = ['', 'truncated literal length', 'literal runs past the input', 'output longer than its preamble says', 'truncated copy', 'copy from before the start', 'output shorter than its preamble says'] as const;

/** Decodes the elements of `src` from byte `pos` into `out[0, len)`: null, or why it cannot. */
export type NativeInflate = (src: Uint8Array, pos: number, out: Uint8Array, len: number) => string | null;

/** The compiled decoder, or null (native code off, or no compiler): the TypeScript twin decodes alike. */
export const nativeSnappy = nativeOnce('snappy decoder', (): NativeInflate => {
  const s = compileC('snappy', C_SOURCES.snappy, {
    svc_snappy_inflate: { args: ['ptr', 'u64', 'u64', 'ptr', 'u64'], returns: 'i64' },
  });
  const inflate = s.svc_snappy_inflate;
  return (src, pos, out, len) => {
    // The C writes up to `len` bytes through `out`: a shorter array would be written past.
    if (out.length < len) throw new RangeError(`snappy: output of ${out.length} bytes for ${len}`);
    const r = Number(inflate(src, src.length, pos, out, len));
    return r === 0 ? null : (SNAPPY_ERRORS[-r] ?? `error ${r}`);
  };
});

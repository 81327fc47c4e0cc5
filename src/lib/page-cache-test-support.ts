/** Test support for page-cache.ts: how much of a file the kernel holds, as util-linux's fincore reports it. */

/** Bytes of `path` in the page cache, or null where fincore is not installed. */
export function cachedBytes(path: string): number | null {
  if (!Bun.which('fincore')) return null;
  return Number(Bun.spawnSync(['fincore', '--bytes', '--noheadings', '--output', 'RES', path]).stdout.toString().trim());
}

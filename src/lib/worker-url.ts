/**
 * Where a Worker's file is. build.ts makes every `*-worker.ts` file under src/ an entrypoint of the executable,
 * where it lives at its path relative to src/; from source it is that path under this repository's src/.
 */
export function workerUrl(pathFromSrc: string): string {
  return import.meta.url.includes('$bunfs') ? `./${pathFromSrc}` : new URL(`../${pathFromSrc}`, import.meta.url).href;
}

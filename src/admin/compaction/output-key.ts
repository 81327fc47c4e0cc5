/** The storage key of a merged file. */
import type { FileManifestStore, ManifestFile } from '../../catalog/index.ts';
import { dataFileKey, type ObjectStore } from '../../storage/index.ts';

const NAME = /_(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})_(\d{9})\.parquet$/;

/** The write time (epoch ns) a data-file name carries, or null for a name outside the layout. */
export function nameNanos(path: string): bigint | null {
  const m = NAME.exec(path);
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return BigInt(ms) * 1_000_000n + BigInt(m[7]!);
}

/**
 * A fresh key in the inputs' hour folder named 1 ns after the newest input. Names then sort like
 * flush sequences, so a manifest rebuilt from storage (which numbers files in key order) keeps
 * last-write-wins order between a merged file and files flushed while it was being written.
 */
export async function mergedFileKey(inputs: readonly ManifestFile[], store: ObjectStore, manifest: FileManifestStore): Promise<string> {
  const first = inputs[0]!;
  const stamps = inputs.map((f) => nameNanos(f.path)).filter((n): n is bigint => n !== null);
  let nanos = stamps.length > 0 ? stamps.reduce((a, b) => (b > a ? b : a)) + 1n : undefined;
  for (;;) {
    const key = dataFileKey(first.database, first.measurement, first.hour, nanos);
    if (!manifest.get(key) && !(await store.stat(key))) return key;
    // Without a stamp to follow, dataFileKey takes a fresh (strictly increasing) one each time.
    if (nanos !== undefined) nanos += 1n;
  }
}

/** The WAL directory as files: listing for GET /api/wal/files, start-up scan, and cleanup of `.recovered` files. */
import { existsSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { parseRecoveredName, parseSegmentName } from './segment.ts';
import type { CleanupResult, WalFileInfo, WalFiles } from './types.ts';

const MB = 1024 * 1024;
const mb = (bytes: number) => Math.round((bytes / MB) * 1000) / 1000;

/** Segment and recovered sequence numbers in `directory` (sorted), plus names ending in .wal that are not ours. */
export function scanDirectory(directory: string): { segments: number[]; recovered: number[]; foreign: string[] } {
  const segments: number[] = [];
  const recovered: number[] = [];
  const foreign: string[] = [];
  for (const name of existsSync(directory) ? readdirSync(directory) : []) {
    const seq = parseSegmentName(name);
    if (seq !== null) segments.push(seq);
    else if (parseRecoveredName(name) !== null) recovered.push(parseRecoveredName(name)!);
    else if (name.endsWith('.wal')) foreign.push(name);
  }
  const asc = (a: number, b: number) => a - b;
  return { segments: segments.sort(asc), recovered: recovered.sort(asc), foreign };
}

/** What the running WAL knows about a segment file; null for files it does not track. */
export type SegmentLookup = (seq: number) => { state: WalFileInfo['state']; pending: number } | null;

/** Lists `*.wal` and `*.wal.recovered` files in `directory`, oldest first, with their state. */
export function listFiles(directory: string, lookup: SegmentLookup): WalFiles {
  const active: WalFileInfo[] = [];
  const recovered: WalFileInfo[] = [];
  let total = 0;
  const names = existsSync(directory) ? readdirSync(directory).sort() : [];
  for (const name of names) {
    const seq = parseSegmentName(name);
    const isRecovered = seq === null && parseRecoveredName(name) !== null;
    if (seq === null && !isRecovered) continue;
    const st = statOrNull(join(directory, name));
    if (!st) continue; // removed while listing
    const known = seq === null ? null : lookup(seq);
    const info: WalFileInfo = {
      name,
      size_bytes: st.size,
      size_mb: mb(st.size),
      modified: Math.floor(st.mtimeMs / 1000),
      state: isRecovered ? 'recovered' : (known?.state ?? 'unreplayed'),
      pending_entries: known ? known.pending : null,
    };
    total += st.size;
    (isRecovered ? recovered : active).push(info);
  }
  return { directory, active, recovered, total_size_mb: mb(total) };
}

/** Deletes `*.wal.recovered` files last modified more than `maxAgeHours` ago (0 = all of them). */
export function removeRecovered(directory: string, maxAgeHours: number): CleanupResult {
  const cutoff = Date.now() - maxAgeHours * 3_600_000;
  let removed = 0;
  let freed = 0;
  for (const name of existsSync(directory) ? readdirSync(directory) : []) {
    if (parseRecoveredName(name) === null) continue;
    const path = join(directory, name);
    const st = statOrNull(path);
    if (!st || (maxAgeHours > 0 && st.mtimeMs > cutoff)) continue;
    try {
      unlinkSync(path);
      removed++;
      freed += st.size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot remove ${name}: ${(err as Error).message}`, { cause: err });
    }
  }
  return { removed, freed_bytes: freed };
}

function statOrNull(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

export { mb as bytesToMb };

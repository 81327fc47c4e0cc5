/** Test helpers for WAL unit tests: a temporary WAL directory, replay into a list, file listings. */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ColumnBatch } from '../ingest/index.ts';
import { Logger, createSvcMetrics } from '../observability/index.ts';
import type { WalOptions, WalTicket } from './types.ts';
import { Wal } from './wal.ts';

const dirs: string[] = [];
/** A logger that writes nothing. */
export const quiet = new Logger({ level: 'error', format: 'text', bufferSize: 10, write: () => {} });
/** Removes the directories made by `setup`; each test file runs it in afterEach. */
export function removeTestDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A fresh WAL directory (removed after the test) and a way to open a Wal on it, as often as a test likes. */
export function setup(over: Partial<WalOptions> = {}) {
  const directory = mkdtempSync(join(tmpdir(), 'wal-test-'));
  dirs.push(directory);
  // A ticker that never fires unless a test asks for one: every test decides when time passes.
  const opts: WalOptions = { directory, syncMode: 'fdatasync', maxSizeBytes: 1 << 20, maxAgeMs: 3_600_000, tickMs: 1e9, idleRotateMs: 1e9, ...over };
  const metrics = createSvcMetrics();
  return { opts, metrics, open: () => Wal.open(opts, metrics, quiet) };
}

/** `*.wal` names in `dir`, sorted. */
export const walFiles = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.wal')).sort();
/** `*.wal.recovered` names in `dir`, sorted. */
export const recovered = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.wal.recovered')).sort();
/** Polls `check` every 5 ms until it holds; fails after `ms` (generous, for a loaded machine). */
export async function until(check: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await Bun.sleep(5);
  }
}
/** Lets queued microtasks (release records) run. */
export const tick = () => new Promise((r) => setTimeout(r, 0));

/** Replays into a list, keeping the tickets, as the buffer would. */
export async function replayAll(wal: Wal) {
  const got: { database: string; batches: ColumnBatch[]; ticket: WalTicket }[] = [];
  const result = await wal.replay(async (database, batches, ticket) => {
    got.push({ database, batches, ticket });
  });
  return { got, result };
}

/** The first `id` of each replayed write. */
export const replayedIds = (got: { batches: ColumnBatch[] }[]) => got.map((g) => Number((g.batches[0]!.columns.get('id')!.values as BigInt64Array)[0]));

/**
 * A write spanning several measurements, some flushed and some still buffered when the process dies,
 * comes back exactly once: each measurement's rows are their own WAL entry, released when they reach
 * Parquet, so replay brings back only the rows that never did.
 */
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { count, ns, writeLines } from './helpers/lifecycle.ts';
import { dataFiles } from './helpers/parquet.ts';
import { json, startServer } from './helpers/server.ts';
import { waitFor } from './helpers/until.ts';

const T0 = Date.UTC(2024, 0, 1);
const env = { SVC_WAL_ENABLED: 'true', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000', SVC_INGEST_MAX_BUFFER_SIZE: '5' };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

test('a crash after one measurement of a write flushed replays only the buffered one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-wal-multi-'));
  dirs.push(dir);
  const a = await startServer({ dir, keepDir: true, env });
  const lines = Array.from({ length: 10 }, (_, i) => `cpu,host=a v=${i} ${ns(T0 + i * 1000)}`);
  lines.push(`mem,host=a v=1 ${ns(T0)}`);
  await writeLines(a, 'multi', lines); // cpu (10 rows) flushes by size; mem (1 row) stays buffered
  // The flush of cpu lands (its Parquet file exists, and no mem row with it) and its release record is
  // in the WAL file (released entries leave pending_entries at once; their record is written in the same task).
  await waitFor('cpu in Parquet and its WAL entry released', async () => {
    const files = dataFiles(dir);
    if (!files.some((f) => f.startsWith('multi/cpu/')) || files.some((f) => f.startsWith('multi/mem/'))) return false;
    return (await json(a, 'GET', '/api/wal/status')).body.stats.pending_entries === 1;
  });
  await a.kill();
  const b = await startServer({ dir, keepDir: true, env });
  try {
    expect(await count(b, 'SELECT count(*) AS n FROM multi.cpu')).toBe(10);
    expect(await count(b, 'SELECT count(DISTINCT v) AS n FROM multi.cpu')).toBe(10);
    expect(await count(b, 'SELECT count(*) AS n FROM multi.mem')).toBe(1);
  } finally {
    await b.stop();
  }
}, 60_000);

/**
 * A query reads exactly the files it planned, even when a compaction, delete or retention run swaps
 * them out meanwhile: planned files are leased, and the reaper deletes a replaced file only after the
 * last query reading it has finished. Buffered rows are pinned the same way (their memory is reused).
 */
import { expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileManifestStore, migrations, openCatalog } from '../src/catalog/index.ts';
import { ConnectionPool, DuckDBInstance, createSandboxedInstance } from '../src/duckdb/index.ts';
import { Logger } from '../src/observability/index.ts';
import type { ColumnBatch } from '../src/ingest/index.ts';
import { type BufferedRows, ManifestTableSource, QueryService } from '../src/query/index.ts';
import { FileReaper, LocalObjectStore } from '../src/storage/index.ts';
import { UNRESTRICTED } from '../src/lib/table-access.ts';

/** A local store, its manifest and the reaper that deletes replaced files, in a new directory. */
async function storage() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-leases-'));
  const root = join(dir, 'data');
  const store = await new LocalObjectStore(root).open();
  const manifest = new FileManifestStore(openCatalog(join(dir, 'svc.db'), migrations));
  const logger = new Logger({ level: 'error', format: 'text', bufferSize: 10, write: () => {} });
  return { root, store, manifest, reaper: new FileReaper({ store, manifest, logger }) };
}

test('a file replaced while a query reads it is deleted only after the query ends', async () => {
  const { root, store, manifest, reaper } = await storage();
  const key = 'db/m/2024/01/01/00/m_20240101_000000_000000001.parquet';
  const writer = await (await DuckDBInstance.create(':memory:')).connect();
  const tmp = store.scratchPath('x.parquet');
  await writer.run(`COPY (SELECT TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (i) SECOND AS time, i::DOUBLE AS v FROM range(1000) r(i)) TO '${tmp}' (FORMAT parquet)`);
  await store.put(key, { file: tmp });
  manifest.add([{ path: key, database: 'db', measurement: 'm', hour: Date.UTC(2024, 0, 1) * 1000, minTime: Date.UTC(2024, 0, 1) * 1000, maxTime: Date.UTC(2024, 0, 1) * 1000 + 999e6, rows: 1000, bytes: 1, columns: ['time', 'v'], seq: 1, createdAt: new Date().toISOString() }]);

  const source = new ManifestTableSource(manifest, root, null, null, { store, reaper });
  const instance = await createSandboxedInstance({ allowedDirectories: [root] });
  const queries = new QueryService(new ConnectionPool(instance, 1), source, { timeoutMs: 60_000, slowQueryMs: 0 });
  // The query is held open by its reader (not by being slow): it reads its first chunk, then waits
  // on a gate the test opens after the swap, so the order of events is the same on any machine.
  let started!: () => void;
  const readingStarted = new Promise<void>((r) => (started = r));
  let openGate!: () => void;
  const gate = new Promise<void>((r) => (openGate = r));
  const running = queries.execute({ sql: 'SELECT v FROM db.m', access: UNRESTRICTED }, async (_columns, next) => {
    let rows = 0;
    for (let chunk = await next(), first = true; chunk; chunk = await next(), first = false) {
      rows += chunk.rowCount;
      if (first) {
        started();
        await gate;
      }
    }
    return { rowCount: rows };
  });
  await readingStarted;
  expect(reaper.inUse(key)).toBe(true);
  manifest.replace([key], []);
  await reaper.collect();
  expect(await store.stat(key)).not.toBeNull();
  openGate();
  expect((await running).result.rowCount).toBe(1000);
  expect(reaper.inUse(key)).toBe(false);
  await reaper.collect();
  expect(await store.stat(key)).toBeNull();
});

// Buffered rows' column memory is reused once their flush registered (src/ingest/column-memory.ts):
// a query that planned them holds a pin, taken in the planning tick, until it ends.
test('a query over buffered rows pins them from the planning tick until it ends', async () => {
  const { root, store, manifest, reaper } = await storage();
  const t0 = Date.UTC(2024, 0, 1) * 1000;
  const batch: ColumnBatch = { measurement: 'm', length: 3, time: Float64Array.from([t0, t0 + 1, t0 + 2]), columns: new Map([['v', { type: 'float64', values: Float64Array.from([1, 2, 3]), valid: null, tag: false }]]) };
  let pins = 0;
  let pinnedInPlanningTick = false;
  const buffered: BufferedRows = {
    snapshot: () => {
      queueMicrotask(() => (pinnedInPlanningTick = pins > 0));
      return [batch];
    },
    pin: () => {
      pins++;
      return () => pins--;
    },
    measurements: () => [{ database: 'db', measurement: 'm' }],
  };
  const source = new ManifestTableSource(manifest, root, buffered, null, { store, reaper });
  const instance = await createSandboxedInstance({ allowedDirectories: [root] });
  const queries = new QueryService(new ConnectionPool(instance, 1), source, { timeoutMs: 60_000, slowQueryMs: 0 });
  let pinsWhileReading = -1;
  const { result } = await queries.execute({ sql: 'SELECT sum(v) AS s FROM db.m', access: UNRESTRICTED }, async (_columns, next) => {
    pinsWhileReading = pins;
    let rows = 0;
    for (let chunk = await next(); chunk; chunk = await next()) rows += chunk.rowCount;
    return { rowCount: rows };
  });
  expect(result.rowCount).toBe(1);
  expect(pinnedInPlanningTick).toBe(true);
  expect(pinsWhileReading).toBe(1);
  expect(pins).toBe(0);
});

import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BufferSet } from '../../buffer/index.ts';
import { FileManifestStore, migrations, openCatalog } from '../../catalog/index.ts';
import { DuckDBInstance } from '../../duckdb/index.ts';
import { Logger, createSvcMetrics } from '../../observability/index.ts';
import { LocalObjectStore } from '../../storage/index.ts';
import { waitFor } from '../../../tests/helpers/until.ts';
import { commitStaged } from './import-commit.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-import-commit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const T0 = Date.UTC(2024, 0, 1) * 1000;

// Rows of the measurement still buffered when an import commits were written before it: their flush
// holds a smaller sequence. Were the import registered first and the process killed before that
// flush registered, WAL replay would give those older rows a sequence above the import's, and
// last-write-wins would keep them over the imported values. So the import registers after them.
test('an import registers only after the earlier buffered rows of its measurements are in files', async () => {
  const manifest = new FileManifestStore(openCatalog(':memory:', migrations));
  const base = await new LocalObjectStore(dir).open();
  // The buffered rows (hour 00) are slow to reach storage; the import's file (hour 02) is not.
  let unblock!: () => void;
  const gate = new Promise<void>((r) => (unblock = r));
  const stored: string[] = [];
  const store = Object.create(base) as typeof base;
  store.put = async (key, src) => {
    if (key.includes('/2024/01/01/00/')) await gate;
    const info = await base.put(key, src);
    stored.push(key);
    return info;
  };
  const instance = await DuckDBInstance.create(':memory:');
  const buffers = await BufferSet.create(
    { instance, store, manifest, metrics: createSvcMetrics(), logger: new Logger({ level: 'error', format: 'text', bufferSize: 10 }) },
    { maxBufferSize: 1000, maxBufferAgeMs: 60_000, flushWorkers: 1, flushQueueSize: 8, compression: 'snappy', admissionTimeoutMs: 1000 },
  );
  buffers.append('db', [{ measurement: 'm', length: 1, time: Float64Array.of(T0), columns: new Map([['v', { type: 'float64', values: Float64Array.of(0.5), valid: null, tag: false }]]) }]);
  const conn = await instance.connect();
  await conn.run(`CREATE TABLE staged AS SELECT TIMESTAMP '2024-01-01 02:10:00' AS time, 1.0 AS v`);
  const staged = [{ measurement: 'm', table: { table: 'staged', rows: 1, columns: [{ name: 'time', type: 'timestamp', tag: false, sqlType: 'TIMESTAMP' }, { name: 'v', type: 'float64', tag: false, sqlType: 'DOUBLE' }] } }];
  const commit = commitStaged({ store, manifest, buffers, compression: 'snappy' }, [conn], 'db', staged as never);
  // The import had its chance: its file is in storage (the commit follows within microtasks of that
  // put resolving, unless it waits), and a macrotask has passed since. Nothing is registered yet.
  await waitFor('the import to store its file', async () => stored.some((k) => k.includes('/2024/01/01/02/')));
  await Bun.sleep(0);
  expect(manifest.listAll()).toEqual([]);
  expect(buffers.stats().in_flight_records).toBe(1);
  unblock();
  const summary = await commit;
  expect(summary.rows).toBe(1);
  expect(manifest.listAll().map((f) => [new Date(f.minTime / 1000).toISOString(), f.rows])).toEqual([
    ['2024-01-01T00:00:00.000Z', 1],
    ['2024-01-01T02:10:00.000Z', 1],
  ]);
  conn.closeSync();
  await buffers.stop();
  instance.closeSync();
});

import { expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BufferSet } from '../../buffer/index.ts';
import { FileManifestStore, migrations, openCatalog } from '../../catalog/index.ts';
import { DuckDBInstance } from '../../duckdb/index.ts';
import { LocalObjectStore } from '../../storage/index.ts';
import { commitStaged } from './import-commit.ts';

// Rows of the measurement still buffered when an import commits were written before it: their flush
// holds a smaller sequence. Were the import registered first and the process killed before that
// flush registered, WAL replay would give those older rows a sequence above the import's, and
// last-write-wins would keep them over the imported values. So the import registers after them.
test('an import registers only after the earlier buffered rows of its measurements are in files', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-commit-'));
  const manifest = new FileManifestStore(openCatalog(':memory:', migrations));
  const store = await new LocalObjectStore(dir).open();
  const duck = await DuckDBInstance.create(':memory:');
  const conn = await duck.connect();
  await conn.run(`CREATE TABLE staged AS SELECT TIMESTAMP '2024-01-01 00:10:00' AS time, 1.0 AS v`);
  let landed!: (ok: boolean) => void;
  const flush = new Promise<boolean>((r) => (landed = r));
  const buffers = { flushMeasurement: () => flush } as unknown as BufferSet;
  const staged = [{ measurement: 'm', table: { table: 'staged', rows: 1, columns: [{ name: 'time', type: 'timestamp', tag: false, sqlType: 'TIMESTAMP' }, { name: 'v', type: 'float64', tag: false, sqlType: 'DOUBLE' }] } }];
  let committed = false;
  const commit = commitStaged({ store, manifest, buffers, compression: 'snappy' }, [conn], 'db', staged as never).then((r) => ((committed = true), r));
  await Bun.sleep(300);
  expect(committed).toBe(false);
  expect(manifest.listAll()).toEqual([]);
  landed(true);
  const summary = await commit;
  expect(summary.rows).toBe(1);
  expect(manifest.listAll().map((f) => f.rows)).toEqual([1]);
  conn.closeSync();
  duck.closeSync();
});

import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileManifestStore, migrations, openCatalog } from '../../catalog/index.ts';
import { ConnectionPool, DuckDBInstance } from '../../duckdb/index.ts';
import { Logger } from '../../observability/index.ts';
import { FileReaper, LocalObjectStore, dataFileKey, type ObjectStore } from '../../storage/index.ts';
import { MeasurementLocks } from '../measurement-locks.ts';
import { RowRemover } from './row-remover.ts';

const root = mkdtempSync(join(tmpdir(), 'svc-remover-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const T0 = Date.UTC(2024, 0, 1) * 1000;

describe('RowRemover', async () => {
  const manifest = new FileManifestStore(openCatalog(':memory:', migrations));
  const store = await new LocalObjectStore(root).open();
  const logger = new Logger({ level: 'error', format: 'text', bufferSize: 10 });
  const reaper = new FileReaper({ store, manifest, logger });
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const pool = new ConnectionPool(instance, 1);
  const remover = (s: ObjectStore = store) =>
    new RowRemover({ manifest, store: s, reaper, buffers: { flushMeasurement: async () => true }, pool, locks: new MeasurementLocks(), compression: 'zstd', logger, flushTimeoutMs: 1000 });

  // One file of 6 rows: hosts a/b alternating, two rows per timestamp (equal times keep their order).
  const key = dataFileKey('d', 'm', T0);
  const scratch = store.scratchPath('x.parquet');
  const values = [[0, 'a', 1], [0, 'b', 2], [1, 'a', 3], [1, 'b', 4], [2, 'a', 5], [2, null, 6]]
    .map(([t, h, v]) => `(make_timestamp(${T0 + Number(t)}::BIGINT), ${h === null ? 'NULL' : `'${h}'`}, ${v}::DOUBLE)`)
    .join(', ');
  await conn.run(`COPY (SELECT * FROM (VALUES ${values}) t(time, host, v)) TO '${scratch}' (FORMAT parquet, KV_METADATA {tags: '["host"]'})`);
  const info = await store.put(key, { file: scratch });
  manifest.add([{ path: key, database: 'd', measurement: 'm', hour: T0, minTime: T0, maxTime: T0 + 2, rows: 6, bytes: info.bytes, columns: ['time', 'host', 'v'], seq: manifest.nextSeq(), createdAt: new Date().toISOString() }]);
  const req = { database: 'd', measurement: 'm', condition: `host = 'b'`, columns: ['host'] };

  test('a failed put leaves the file, the manifest and the scratch folder as they were', async () => {
    const failing: ObjectStore = Object.assign(Object.create(Object.getPrototypeOf(store)) as ObjectStore, store, {
      put: async () => {
        throw new Error('cannot write: disk full');
      },
    });
    const r = await remover(failing).remove(req);
    expect(r).toMatchObject({ deleted_rows: 0, rewritten_files: 0, failed_files: [key] });
    expect(r.errors[key]).toContain('disk full');
    expect(manifest.listAll().map((f) => [f.path, f.rows])).toEqual([[key, 6]]);
    expect(manifest.pendingFiles()).toEqual([]);
    expect(readdirSync(join(root, '.tmp'))).toEqual([]);
  });

  test('a rewrite swaps in a new file with the remaining rows, in order, with tags and the same sequence', async () => {
    const before = manifest.get(key)!;
    const r = await remover().remove(req);
    expect(r).toEqual({ deleted_rows: 2, deleted_files: 0, rewritten_files: 1, failed_files: [], errors: {} });
    const [after] = manifest.listAll();
    expect(after!.path).not.toBe(key);
    expect(after).toMatchObject({ rows: 4, seq: before.seq, minTime: T0, maxTime: T0 + 2, hour: T0 });
    expect(manifest.pendingFiles()).toEqual([]);
    await reaper.collect();
    expect(await store.stat(key)).toBeNull();
    const path = await store.localPath(after!.path);
    const rows = (await conn.runAndReadAll(`SELECT host, v FROM read_parquet('${path}')`)).getRowObjectsJS();
    expect(rows).toEqual([{ host: 'a', v: 1 }, { host: 'a', v: 3 }, { host: 'a', v: 5 }, { host: null, v: 6 }]);
    const tags = (await conn.runAndReadAll(`SELECT decode(value) FROM parquet_kv_metadata('${path}') WHERE decode(key) = 'tags'`)).getRows();
    expect(tags).toEqual([['["host"]']]);
  });

  test('a file compacted between planning and its swap is planned again from the merged file', async () => {
    const [current] = manifest.listAll();
    let calls = 0;
    const racing: ObjectStore = Object.assign(Object.create(Object.getPrototypeOf(store)) as ObjectStore, store, {
      localPath: async (k: string) => {
        // Second read of the file = its rewrite: a "compaction" replaces it just before.
        if (k === current!.path && ++calls === 2) {
          const merged = dataFileKey('d', 'm', T0);
          await store.put(merged, await store.get(current!.path));
          manifest.replace([current!.path], [{ ...current!, path: merged }]);
        }
        return store.localPath(k);
      },
    });
    const r = await remover(racing).remove({ ...req, condition: 'v = 3', columns: ['v'] });
    expect(r).toEqual({ deleted_rows: 1, deleted_files: 0, rewritten_files: 1, failed_files: [], errors: {} });
    expect(manifest.listAll().map((f) => f.rows)).toEqual([3]);
    expect(manifest.pendingFiles()).toEqual([]);
    // The discarded first rewrite and the replaced files are gone from storage.
    await reaper.collect();
    expect((await store.list('d/')).map((o) => o.key)).toEqual(manifest.listAll().map((f) => f.path));
  });

  test('a file left without rows leaves the manifest', async () => {
    const r = await remover().remove({ ...req, condition: 'v > 0', columns: ['v'] });
    expect(r).toMatchObject({ deleted_rows: 3, deleted_files: 1, rewritten_files: 0 });
    expect(manifest.listAll()).toEqual([]);
  });
});

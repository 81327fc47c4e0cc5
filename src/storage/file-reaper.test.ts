import { expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileManifestStore, migrations, openCatalog, type ManifestFile } from '../catalog/index.ts';
import { Logger } from '../observability/index.ts';
import { FileReaper, LocalObjectStore } from './index.ts';

const file = (path: string, seq: number): ManifestFile => ({
  path,
  database: 'db',
  measurement: 'm',
  hour: 0,
  minTime: 0,
  maxTime: 1,
  rows: 1,
  bytes: 1,
  columns: ['time'],
  seq,
  createdAt: new Date().toISOString(),
});

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-reaper-'));
  const store = await new LocalObjectStore(join(dir, 'data')).open();
  const manifest = new FileManifestStore(openCatalog(join(dir, 'svc.db'), migrations));
  const reaper = new FileReaper({ store, manifest, logger: new Logger({ level: 'error', format: 'text', bufferSize: 10, write: () => {} }) });
  return { store, manifest, reaper };
}

test('a replaced file is deleted only after the last query releases it', async () => {
  const { store, manifest, reaper } = await setup();
  await store.put('db/m/a.parquet', new Uint8Array([1]));
  await store.put('db/m/b.parquet', new Uint8Array([2]));
  manifest.add([file('db/m/a.parquet', 1)]);
  const release1 = reaper.acquire(['db/m/a.parquet']);
  const release2 = reaper.acquire(['db/m/a.parquet']);
  manifest.replace(['db/m/a.parquet'], [file('db/m/b.parquet', 2)]);
  expect(await reaper.collect()).toBe(0);
  expect(await store.stat('db/m/a.parquet')).not.toBeNull();
  release1();
  release1(); // idempotent: does not drop the second lease
  await reaper.collect();
  expect(await store.stat('db/m/a.parquet')).not.toBeNull();
  release2();
  await reaper.collect();
  expect(await store.stat('db/m/a.parquet')).toBeNull();
  expect(manifest.tombstones()).toEqual([]);
  expect(await store.stat('db/m/b.parquet')).not.toBeNull();
});

test('a file rewritten in place under the same path is never tombstoned or deleted', async () => {
  const { store, manifest, reaper } = await setup();
  await store.put('db/m/a.parquet', new Uint8Array([1]));
  manifest.add([file('db/m/a.parquet', 1)]);
  manifest.replace(['db/m/a.parquet'], [file('db/m/a.parquet', 2)]);
  expect(manifest.tombstones()).toEqual([]);
  await reaper.collect();
  expect(await store.stat('db/m/a.parquet')).not.toBeNull();
});

test('tombstones survive a restart and are collected then', async () => {
  const { store, manifest, reaper } = await setup();
  await store.put('db/m/a.parquet', new Uint8Array([1]));
  manifest.add([file('db/m/a.parquet', 1)]);
  reaper.acquire(['db/m/a.parquet']); // a query that never finished before the "crash"
  manifest.remove(['db/m/a.parquet']);
  expect(manifest.tombstones()).toEqual(['db/m/a.parquet']);
  const fresh = new FileReaper({ store, manifest, logger: new Logger({ level: 'error', format: 'text', bufferSize: 10, write: () => {} }) });
  expect(await fresh.collect()).toBe(1);
  expect(await store.stat('db/m/a.parquet')).toBeNull();
});

test('releasing the last lease deletes a tombstoned file by itself; each tombstone is counted once', async () => {
  const { store, manifest, reaper } = await setup();
  expect(manifest.hasTombstones()).toBe(false);
  await store.put('db/m/a.parquet', new Uint8Array([1]));
  await store.put('db/m/b.parquet', new Uint8Array([2]));
  manifest.add([file('db/m/a.parquet', 1), file('db/m/b.parquet', 2)]);
  reaper.acquire(['db/m/b.parquet'])(); // nothing tombstoned: no collection
  const release = reaper.acquire(['db/m/a.parquet']);
  manifest.remove(['db/m/a.parquet']);
  manifest.remove(['db/m/a.parquet']); // already gone: no second tombstone counted
  expect(manifest.hasTombstones()).toBe(true);
  release();
  // The collection runs on its own: the object goes first, then its tombstone.
  for (let i = 0; i < 200 && manifest.hasTombstones(); i++) await Bun.sleep(5);
  expect(await store.stat('db/m/a.parquet')).toBeNull();
  expect(manifest.hasTombstones()).toBe(false);
  expect(await store.stat('db/m/b.parquet')).not.toBeNull();
});

import { expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MeasurementLocks } from '../admin/index.ts';
import { FileManifestStore, migrations, openCatalog, type ManifestFile } from '../catalog/index.ts';
import { Logger } from '../observability/index.ts';
import { FileReaper, LocalObjectStore } from '../storage/index.ts';
import { FileMover } from './file-mover.ts';
import { TieredObjectStore } from './tiered-object-store.ts';
import { TieringStore } from './tiering-store.ts';

const KEY = 'db/m/2024/01/01/00/m_20240101_000000_000000001.parquet';
const BYTES = new Uint8Array([1, 2, 3, 4, 5]);

const file = (path: string): ManifestFile => ({
  path, database: 'db', measurement: 'm', hour: Date.UTC(2024, 0, 1) * 1000, minTime: 0, maxTime: 1, rows: 1, bytes: BYTES.byteLength, columns: ['time'], seq: 1, createdAt: new Date().toISOString(),
});

async function setup(graceMs = 0) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-mover-'));
  const hot = await new LocalObjectStore(join(dir, 'hot')).open();
  const cold = await new LocalObjectStore(join(dir, 'cold')).open();
  const catalog = openCatalog(join(dir, 'svc.db'), migrations);
  const manifest = new FileManifestStore(catalog);
  const tiered = new TieredObjectStore(hot, cold, () => manifest);
  manifest.setPlacement((p) => tiered.takePlacement(p));
  const reaper = new FileReaper({ store: tiered, manifest, logger: new Logger({ level: 'error', format: 'text', bufferSize: 10, write: () => {} }) });
  const store = new TieringStore(catalog);
  const locks = new MeasurementLocks();
  const mover = new FileMover({ hot, cold, manifest, store, inUse: (k) => reaper.inUse(k), graceMs, locks });
  await hot.put(KEY, BYTES);
  manifest.add([file(KEY)]);
  return { dir, hot, cold, manifest, tiered, reaper, store, mover, locks };
}

test('a moved file is read from cold at once; its hot copy goes only after the query holding it ends', async () => {
  const t = await setup();
  try {
    const release = t.reaper.acquire([KEY]);
    expect(await t.mover.move(t.manifest.get(KEY)!)).toEqual({ moved: true, bytes: BYTES.byteLength });
    expect(t.manifest.get(KEY)!.tier).toBe('cold');
    expect(await t.tiered.localPath(KEY)).toBe(await t.cold.localPath(KEY));
    // Held by a query: the hot copy stays, the move stays open.
    expect(await t.hot.stat(KEY)).not.toBeNull();
    expect(t.store.openMoves()).toEqual([KEY]);
    expect(await t.mover.settle()).toBe(0);
    release();
    expect(await t.mover.settle()).toBe(1);
    expect(await t.hot.stat(KEY)).toBeNull();
    expect(await t.cold.get(KEY)).toEqual(BYTES);
    expect(t.store.openMoves()).toEqual([]);
  } finally {
    rmSync(t.dir, { recursive: true, force: true });
  }
});

test('a new file of a cold hour is written to cold and recorded cold; a hot hour stays hot', async () => {
  const t = await setup();
  try {
    await t.mover.move(t.manifest.get(KEY)!);
    const late = KEY.replace('000000001', '000000002');
    await t.tiered.put(late, BYTES);
    await t.manifest.commit([], [file(late)]);
    expect(t.manifest.get(late)!.tier).toBe('cold');
    expect(await t.hot.stat(late)).toBeNull();
    const other = 'db/m/2024/01/01/01/m_20240101_010000_000000003.parquet';
    await t.tiered.put(other, BYTES);
    await t.manifest.commit([], [{ ...file(other), hour: Date.UTC(2024, 0, 1, 1) * 1000 }]);
    expect(t.manifest.get(other)!.tier).toBe('hot');
    // A replaced file is deleted from whichever tier holds it.
    t.manifest.replace([late, other], []);
    await t.reaper.collect();
    expect(await t.tiered.stat(late)).toBeNull();
    expect(await t.tiered.stat(other)).toBeNull();
  } finally {
    rmSync(t.dir, { recursive: true, force: true });
  }
});

test('a file no longer listed when its copy is done is not switched; its cold copy is dropped', async () => {
  const t = await setup();
  try {
    const f = t.manifest.get(KEY)!;
    t.manifest.remove([KEY]);
    expect(await t.mover.move(f)).toEqual({ moved: false, reason: 'no longer listed' });
    expect(await t.cold.stat(KEY)).toBeNull();
    expect(t.store.openMoves()).toEqual([]);
  } finally {
    rmSync(t.dir, { recursive: true, force: true });
  }
});

test('in a cluster the hot copy outlives the switch by the grace period (other nodes hold no lease here)', async () => {
  const t = await setup(60_000);
  try {
    expect((await t.mover.move(t.manifest.get(KEY)!)).moved).toBe(true);
    expect(await t.mover.settle()).toBe(0);
    expect(await t.hot.stat(KEY)).not.toBeNull();
    expect(t.store.openMoves()).toEqual([KEY]);
    expect(await t.tiered.get(KEY)).toEqual(BYTES);
  } finally {
    rmSync(t.dir, { recursive: true, force: true });
  }
});

test('the switch waits for a rewrite holding the measurement; a file the rewrite swapped away is not switched back', async () => {
  const t = await setup();
  try {
    let done!: () => void;
    const held = t.locks.run([{ database: 'db', measurement: 'm' }], () => new Promise<void>((r) => (done = r)));
    const moving = t.mover.move(t.manifest.get(KEY)!);
    await Bun.sleep(50);
    t.manifest.replace([KEY], []);
    done();
    await held;
    expect(await moving).toEqual({ moved: false, reason: 'no longer listed' });
    expect(t.manifest.get(KEY)).toBeNull();
    expect(await t.cold.stat(KEY)).toBeNull();
  } finally {
    rmSync(t.dir, { recursive: true, force: true });
  }
});

import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileManifestStore, migrations, openCatalog } from '../catalog/index.ts';
import { DuckDBInstance } from '../duckdb/index.ts';
import type { ColumnBatch } from '../ingest/index.ts';
import { Logger, createSvcMetrics } from '../observability/index.ts';
import { LocalObjectStore } from '../storage/index.ts';
import { BufferSet } from './index.ts';

const root = mkdtempSync(join(tmpdir(), 'svc-buffer-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const T0 = Date.UTC(2024, 0, 1) * 1000;

const batch = (n: number, t0: number): ColumnBatch => ({
  measurement: 'm',
  length: n,
  time: Float64Array.from({ length: n }, (_, i) => t0 + i),
  columns: new Map([['v', { type: 'float64', values: new Float64Array(n).fill(1), valid: null, tag: false }]]),
});

describe('BufferSet', async () => {
  const manifest = new FileManifestStore(openCatalog(':memory:', migrations));
  const store = await new LocalObjectStore(root).open();
  const instance = await DuckDBInstance.create(':memory:');
  const released: unknown[] = [];
  const buffers = await BufferSet.create(
    { instance, store, manifest, metrics: createSvcMetrics(), logger: new Logger({ level: 'error', format: 'text', bufferSize: 10 }), onRelease: (t) => released.push(t) },
    { maxBufferSize: 700, maxBufferAgeMs: 60_000, flushWorkers: 2, flushQueueSize: 64, compression: 'snappy', admissionTimeoutMs: 1000 },
  );

  test('every acknowledged row is in the manifest or the snapshot, exactly once, at every tick', async () => {
    let total = 0;
    const seen = () => manifest.list({ database: 'd', measurement: 'm' }).reduce((n, f) => n + f.rows, 0) + buffers.snapshot('d', 'm').reduce((n, b) => n + b.length, 0);
    for (let i = 0; i < 40; i++) {
      buffers.append('d', [batch(100, T0 + i * 100)], `ticket-${i}`);
      total += 100;
      expect(seen()).toBe(total);
      await Bun.sleep(1);
      expect(seen()).toBe(total);
    }
    const flushing = buffers.flushAll();
    while (buffers.stats().in_flight_jobs > 0) {
      expect(seen()).toBe(total);
      await Bun.sleep(0);
    }
    expect(await flushing).toBe(true);
    expect(buffers.snapshot('d', 'm')).toEqual([]);
    expect(seen()).toBe(total);
    expect(buffers.measurements()).toEqual([]);
    // Every ticket is released once, only after its rows were registered.
    expect(new Set(released).size).toBe(40);
    expect(released).toHaveLength(40);
    const seqs = manifest.listAll().map((f) => f.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  test('snapshots are not changed by later appends', () => {
    buffers.append('d', [batch(3, T0)]);
    const snap = buffers.snapshot('d', 'm');
    buffers.append('d', [batch(4, T0)]);
    expect(snap.reduce((n, b) => n + b.length, 0)).toBe(3);
    expect(buffers.measurements('d')).toEqual([{ database: 'd', measurement: 'm' }]);
  });

  test('stop flushes everything', async () => {
    await buffers.stop();
    expect(buffers.snapshot('d', 'm')).toEqual([]);
    expect(manifest.listAll().reduce((n, f) => n + f.rows, 0)).toBe(4007);
  });
});

// WAL replay gives replayed rows a new (largest) flush sequence. If a newer flush of a measurement
// registered (and released its WAL entries) while an older one was still being written, a crash
// then would replay the older rows with a sequence above the newer file's: compaction would keep
// the older value. So a measurement's flushes register in sequence order.
test('a later flush of a measurement does not register (or release its WAL entry) before an earlier one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-buffer-order-'));
  const manifest = new FileManifestStore(openCatalog(':memory:', migrations));
  const base = await new LocalObjectStore(dir).open();
  let unblock!: () => void;
  const gate = new Promise<void>((r) => (unblock = r));
  let puts = 0;
  const store = Object.create(base) as typeof base;
  store.put = async (key, src) => {
    puts++;
    if (key.includes('/2024/01/01/00/')) await gate; // the older flush (hour 00) is slow to reach storage
    return base.put(key, src);
  };
  const instance = await DuckDBInstance.create(':memory:');
  const released: unknown[] = [];
  const buffers = await BufferSet.create(
    { instance, store, manifest, metrics: createSvcMetrics(), logger: new Logger({ level: 'error', format: 'text', bufferSize: 10 }), onRelease: (t) => released.push(t) },
    { maxBufferSize: 1000, maxBufferAgeMs: 60_000, flushWorkers: 2, flushQueueSize: 64, compression: 'snappy', admissionTimeoutMs: 1000 },
  );
  buffers.append('d', [batch(5, T0)], 'older');
  const first = buffers.flushMeasurement('d', 'm');
  buffers.append('d', [batch(5, T0 + 3_600_000_000)], 'newer');
  const second = buffers.flushMeasurement('d', 'm');
  for (let i = 0; i < 100 && puts < 2; i++) await Bun.sleep(10);
  await Bun.sleep(100);
  expect(puts).toBe(2); // both flushes ran in parallel
  expect(manifest.listAll()).toEqual([]);
  expect(released).toEqual([]);
  expect(buffers.snapshot('d', 'm').reduce((n, b) => n + b.length, 0)).toBe(10);
  unblock();
  expect(await first).toBe(true);
  expect(await second).toBe(true);
  expect(released).toEqual(['older', 'newer']);
  expect(manifest.listAll().reduce((n, f) => n + f.rows, 0)).toBe(10);
  expect(buffers.snapshot('d', 'm')).toEqual([]);
  await buffers.stop();
  instance.closeSync();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Column memory reused across writes (ingest/column-memory.ts) against the real write buffer and flush
 * workers: bodies parsed in place while flushes run and readers hold pinned snapshots. Every row's
 * values are a function of its time, so a row whose memory was handed to a later body while still
 * readable shows up as a mismatch, in a snapshot or in the Parquet files.
 */
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Packr } from 'msgpackr';
import { FileManifestStore, migrations, openCatalog } from '../catalog/index.ts';
import { DuckDBInstance } from '../duckdb/index.ts';
import { type ColumnBatch, columnMemory, ParsePool } from '../ingest/index.ts';
import { Logger, createSvcMetrics } from '../observability/index.ts';
import { LocalObjectStore } from '../storage/index.ts';
import { BufferSet } from './index.ts';

const root = mkdtempSync(join(tmpdir(), 'svc-column-memory-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const T0 = Date.UTC(2024, 0, 1) * 1000;

// Each row's values from its time (µs): exact in float64 and int64.
const vOf = (t: number) => (t % 1000) / 8;
const nOf = (t: number) => t % 997;
const hostOf = (t: number) => `h${t % 13}`;

const packr = new Packr({ useRecords: false });
function body(k: number, rows: number): Uint8Array {
  const time = Array.from({ length: rows }, (_, i) => T0 + k * 100_000 + i);
  return packr.pack({ m: 'm', columns: { time, host: time.map(hostOf), v: time.map(vOf), n: time.map(nOf) } });
}

/** Rows of `batches` whose values do not match their time. */
function mismatches(batches: readonly ColumnBatch[]): number {
  let bad = 0;
  for (const b of batches) {
    const v = b.columns.get('v')!.values as Float64Array;
    const n = b.columns.get('n')!.values as BigInt64Array;
    const host = b.columns.get('host')!;
    const hosts = host.type === 'string' && host.dict ? host.dict : null;
    for (let i = 0; i < b.length; i++) {
      const t = b.time[i]!;
      const h = hosts ? hosts.dictionary[hosts.codes[i]!] : (host.values as (string | null)[])[i];
      if (v[i] !== vOf(t) || n[i] !== BigInt(nOf(t)) || h !== hostOf(t)) bad++;
    }
  }
  return bad;
}

test('bodies, flushes and pinned readers interleaved: every row intact in snapshots and in Parquet, and memory reused', async () => {
  const manifest = new FileManifestStore(openCatalog(':memory:', migrations));
  const store = await new LocalObjectStore(root).open();
  const instance = await DuckDBInstance.create(':memory:');
  const buffers = await BufferSet.create(
    { instance, store, manifest, metrics: createSvcMetrics(), logger: new Logger({ level: 'error', format: 'text', bufferSize: 10 }) },
    { maxBufferSize: 10_000, maxBufferAgeMs: 60_000, flushWorkers: 2, flushQueueSize: 64, compression: 'snappy', admissionTimeoutMs: 10_000 },
  );
  const pool = new ParsePool(0);
  const before = columnMemory.stats();
  let total = 0;
  let readerChecks = 0;
  const readers: Promise<void>[] = [];
  // A reader as the query engine is one: snapshot and pin in one tick, read after awaits, unpin.
  const read = async (wait: number) => {
    const snapshot = buffers.snapshot('d', 'm');
    const unpin = buffers.pin();
    try {
      await Bun.sleep(wait);
      expect(mismatches(snapshot)).toBe(0);
      readerChecks += snapshot.reduce((n, b) => n + b.length, 0);
    } finally {
      unpin();
    }
  };
  const writers = Array.from({ length: 4 }, async (_, w) => {
    for (let k = w; k < 160; k += 4) {
      const rows = 3000 + ((k * 7919) % 9000);
      await buffers.waitForRoom();
      buffers.append('d', await pool.parseMsgpack(body(k, rows), 0));
      total += rows;
      if (k % 3 === 0) readers.push(read(k % 2 === 0 ? 100 : 5));
      await Bun.sleep(k % 3);
    }
  });
  await Promise.all(writers);
  await Promise.all(readers);
  expect(await buffers.flushAll()).toBe(true);

  const files = manifest.list({ database: 'd', measurement: 'm' });
  expect(files.reduce((n, f) => n + f.rows, 0)).toBe(total);
  const paths = await Promise.all(files.map((f) => store.localPath(f.path)));
  const conn = await instance.connect();
  const [row] = (
    await conn.runAndReadAll(
      `WITH r AS (SELECT epoch_us(time) AS t, * EXCLUDE (time) FROM read_parquet([${paths.map((p) => `'${p}'`).join(', ')}]))
       SELECT count(*)::DOUBLE, count(DISTINCT t)::DOUBLE, count(*) FILTER (WHERE v <> (t % 1000) / 8 OR n <> t % 997 OR host <> 'h' || (t % 13))::DOUBLE FROM r`,
    )
  ).getRows();
  expect(row).toEqual([total, total, 0]);
  expect(readerChecks).toBeGreaterThan(0);
  // The test is only worth something if memory was handed to later bodies while the others were read.
  const after = columnMemory.stats();
  expect(after.reusedCarvings - before.reusedCarvings).toBeGreaterThan(100);
  expect(after.pins).toBe(0);
  conn.closeSync();
  await buffers.stop();
  instance.closeSync();
}, 120_000);

import { afterEach, describe, expect, test } from 'bun:test';
import { existsSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FILE_HEADER } from './frame.ts';
import { DisabledWal, Wal, type WalTicket } from './index.ts';
import { makeBatch, rowsOf, sampleBatch } from './test-batches.ts';
import { quiet, recovered, replayAll, removeTestDirs, setup, tick, until, walFiles } from './test-support.ts';

afterEach(removeTestDirs);

describe('Wal append and replay', () => {
  test('replays every appended write, in order, after a crash', async () => {
    const { open, opts, metrics } = setup();
    const wal = await open();
    const writes = [sampleBatch(100, 0), makeBatch('m2', [5, 6], { v: { values: [1.5, null] }, t: { values: ['a', 'b'], tag: true } }), sampleBatch(3, 100)];
    await wal.append('db1', [writes[0]!]);
    await wal.append('db2', [writes[1]!, writes[2]!]);
    expect(metrics.walRecordsPreserved.value()).toBe(105);
    // No close: a killed process leaves the file as it is.
    const again = await Wal.open(opts, metrics, quiet);
    const { got, result } = await replayAll(again);
    expect(result).toEqual({ files: 1, records: 105, dropped: 0, skipped: 0 });
    expect(got.map((g) => g.database)).toEqual(['db1', 'db2']);
    expect(rowsOf(got[0]!.batches[0]!)).toEqual(rowsOf(writes[0]!));
    expect(rowsOf(got[1]!.batches[0]!)).toEqual(rowsOf(writes[1]!));
    expect(rowsOf(got[1]!.batches[1]!)).toEqual(rowsOf(writes[2]!));
    expect(metrics.walRecovery.value()).toBe(1);
    expect(metrics.walRecoveryRecords.value()).toBe(105);
    expect(again.status().recovery).toMatchObject({ files: 1, records: 105 });
  });

  test('keeps a replayed file until its rows are released, then renames it .wal.recovered', async () => {
    const { open, opts } = setup();
    const first = await open();
    await first.append('db', [sampleBatch(10)]);
    await first.append('db', [sampleBatch(10, 10)]);
    const [name] = walFiles(opts.directory);

    const second = await open();
    const { got } = await replayAll(second);
    expect(walFiles(opts.directory)).toContain(name!);
    second.release(got[0]!.ticket);
    await tick();
    expect(walFiles(opts.directory)).toContain(name!);
    second.release(got[1]!.ticket);
    await tick();
    expect(walFiles(opts.directory)).not.toContain(name!);
    expect(recovered(opts.directory)).toEqual([`${name}.recovered`]);
  });

  test('a crash after replay loses nothing, and released entries are not replayed again', async () => {
    const { open } = setup();
    const first = await open();
    for (let i = 0; i < 4; i++) await first.append('db', [sampleBatch(5, i * 5)]);

    const second = await open(); // crash 1: nothing flushed
    const r2 = await replayAll(second);
    expect(r2.result.records).toBe(20);
    second.release(r2.got[0]!.ticket); // entry 0 flushed
    second.release(r2.got[2]!.ticket); // entry 2 flushed
    const fresh = await second.append('db', [sampleBatch(5, 100)]); // a new write during the second life
    await tick();

    const third = await open(); // crash 2, before the rest was flushed
    const r3 = await replayAll(third);
    expect(r3.result).toEqual({ files: 2, records: 15, dropped: 0, skipped: 2 });
    const ids = r3.got.flatMap((g) => [...(g.batches[0]!.columns.get('id')!.values as BigInt64Array)].map(Number));
    expect(ids).toEqual([5, 6, 7, 8, 9, 15, 16, 17, 18, 19, 100, 101, 102, 103, 104]);
    expect(fresh.records).toBe(5);
  });

  test('a replay callback that appends again releases the replayed entry at once', async () => {
    const { open, opts } = setup();
    await (await open()).append('db', [sampleBatch(4)]);
    const wal = await open();
    const result = await wal.replay(async (db, batches) => wal.append(db, batches));
    await tick();
    expect(result.records).toBe(4);
    expect(recovered(opts.directory)).toHaveLength(1);
    expect(walFiles(opts.directory)).toHaveLength(1); // the new active segment, holding the copy
  });
});

describe('Wal segments', () => {
  test('rotates by size; every file stays within the limit', async () => {
    const { open, opts } = setup({ maxSizeBytes: 32 * 1024 });
    const wal = await open();
    for (let i = 0; i < 12; i++) await wal.append('db', [sampleBatch(200, i * 200)]); // about 12 KB each
    const files = walFiles(opts.directory);
    expect(files.length).toBeGreaterThanOrEqual(4);
    for (const f of files) expect(statSync(join(opts.directory, f)).size).toBeLessThanOrEqual(32 * 1024);
    expect(wal.status().stats!.total_rotations).toBe(files.length - 1);
  });

  test('rotates by age on the ticker', async () => {
    const { open, opts } = setup({ maxAgeMs: 30, tickMs: 10 });
    const wal = await open();
    await wal.append('db', [sampleBatch(5)]);
    await until(() => wal.status().stats!.total_rotations === 1);
    await wal.append('db', [sampleBatch(5, 5)]);
    expect(walFiles(opts.directory)).toHaveLength(2);
    await wal.close();
  });

  test('removes fully released segments, oldest first', async () => {
    const { open, opts } = setup({ maxSizeBytes: 32 * 1024 });
    const wal = await open();
    const tickets: WalTicket[] = [];
    for (let i = 0; i < 9; i++) tickets.push(await wal.append('db', [sampleBatch(200, i * 200)]));
    const segs = [...new Set(tickets.map((t) => t.segment))];
    expect(segs.length).toBeGreaterThanOrEqual(3);
    const inSeg = (s: number) => tickets.filter((t) => t.segment === s);
    for (const t of inSeg(segs[1]!)) wal.release(t); // second segment first: must wait for the first
    await tick();
    expect(walFiles(opts.directory)).toHaveLength(segs.length);
    for (const t of inSeg(segs[0]!)) wal.release(t);
    await tick();
    expect(walFiles(opts.directory)).toHaveLength(segs.length - 2);
    wal.release(tickets[0]!); // twice: ignored
    expect(wal.files().active.map((f) => f.state)).toContain('active');
  });

  test('retires the active segment once everything in it is released and it is idle', async () => {
    const { open, opts } = setup({ tickMs: 10, idleRotateMs: 300 });
    const wal = await open();
    const t = await wal.append('db', [sampleBatch(5)]);
    wal.release(t);
    await Bun.sleep(30);
    expect(walFiles(opts.directory)).toHaveLength(1); // younger than idleRotateMs: kept
    await until(() => walFiles(opts.directory).length === 0);
    expect(wal.status().stats!.total_rotations).toBe(1);
    await wal.close();
  });

  test('writes an oversized payload whole, alone in its own segment', async () => {
    const { open, opts, metrics } = setup({ maxSizeBytes: 4096 });
    const wal = await open();
    const small = await wal.append('db', [sampleBatch(2)]);
    const big = await wal.append('db', [sampleBatch(2000)]);
    const next = await wal.append('db', [sampleBatch(2, 5000)]);
    expect(metrics.walOversized.value()).toBe(1);
    expect(new Set([small.segment, big.segment, next.segment]).size).toBe(3);
    expect(big.offset).toBe(FILE_HEADER.length);
    const { got } = await replayAll(await open());
    expect(got.map((g) => g.batches[0]!.length)).toEqual([2, 2000, 2]);
  });

  test('syncs on the ticker and reports it', async () => {
    const { open } = setup({ tickMs: 10 });
    const wal = await open();
    await wal.append('db', [sampleBatch(5)]);
    await until(() => wal.status().stats!.total_syncs >= 1);
    expect(wal.health()).toMatchObject({ status: 'healthy', sync_lag_ms: 0, pending_entries: 1 });
    await wal.close();
  });

  test('close removes fully released files and refuses later appends', async () => {
    const { open, opts } = setup();
    const wal = await open();
    wal.release(await wal.append('db', [sampleBatch(5)]));
    await wal.close();
    expect(walFiles(opts.directory)).toEqual([]);
    await expect(wal.append('db', [sampleBatch(1)])).rejects.toThrow(/cannot append to WAL: it is closed/);
    expect(wal.health().status).toBe('unhealthy');
  });
});

describe('Wal reports and cleanup', () => {
  test('status and files describe the live segments', async () => {
    const { open, opts } = setup();
    const wal = await open();
    await wal.append('db', [sampleBatch(50)]);
    const st = wal.status();
    expect(st.enabled).toBe(true);
    expect(st.configuration).toMatchObject({ sync_mode: 'fdatasync', directory: opts.directory, max_size_mb: 1 });
    expect(st.stats).toMatchObject({ total_entries: 1, total_records: 50, pending_entries: 1, live_files: 1 });
    const files = wal.files();
    expect(files.active).toHaveLength(1);
    expect(files.active[0]).toMatchObject({ state: 'active', pending_entries: 1 });
    expect(files.active[0]!.size_bytes).toBe(st.stats!.total_bytes + FILE_HEADER.length);
  });

  test('cleanup removes only .recovered files older than the limit', async () => {
    const { open, opts } = setup();
    const old = join(opts.directory, '0000000000000001.wal.recovered');
    const young = join(opts.directory, '0000000000000002.wal.recovered');
    writeFileSync(old, 'x'.repeat(100));
    writeFileSync(young, 'y');
    const twoDaysAgo = (Date.now() - 48 * 3_600_000) / 1000;
    utimesSync(old, twoDaysAgo, twoDaysAgo);
    const wal = await open();
    expect(await wal.cleanup(24)).toEqual({ removed: 1, freed_bytes: 100 });
    expect(existsSync(young)).toBe(true);
    expect(await wal.cleanup(0)).toEqual({ removed: 1, freed_bytes: 1 });
  });

  test('the disabled WAL has the same shape and does nothing', async () => {
    const { opts } = setup();
    const wal = new DisabledWal(opts);
    const t = await wal.append('db', [sampleBatch(3)]);
    expect(t.records).toBe(3);
    wal.release(t);
    expect(await wal.replay()).toEqual({ files: 0, records: 0, dropped: 0, skipped: 0 });
    expect(wal.status()).toMatchObject({ enabled: false, stats: null });
    expect(wal.health()).toMatchObject({ status: 'disabled', healthy: true });
    expect(wal.files().active).toEqual([]);
    expect(walFiles(opts.directory)).toEqual([]);
  });
});

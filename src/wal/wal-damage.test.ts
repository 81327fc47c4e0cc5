import { afterEach, describe, expect, test } from 'bun:test';
import { readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../lib/errors.ts';
import { FRAME_HEADER } from './frame.ts';
import type { WalTicket } from './index.ts';
import { sampleBatch } from './test-batches.ts';
import { replayAll, replayedIds, removeTestDirs, setup, tick, walFiles } from './test-support.ts';

afterEach(removeTestDirs);

describe('Wal damage handling', () => {
  async function threeEntries() {
    const s = setup();
    const wal = await s.open();
    const tickets: WalTicket[] = [];
    for (let i = 0; i < 3; i++) tickets.push(await wal.append('db', [sampleBatch(10, i * 10)]));
    const path = join(s.opts.directory, walFiles(s.opts.directory)[0]!);
    return { ...s, path, tickets };
  }

  test('a torn tail entry is skipped and counted', async () => {
    const { open, path, metrics } = await threeEntries();
    truncateSync(path, statSync(path).size - 10);
    const { got, result } = await replayAll(await open());
    expect(replayedIds(got)).toEqual([0, 10]);
    expect(result.dropped).toBe(1);
    expect(metrics.walDroppedEntries.value()).toBe(1);
  });

  test('a bad CRC in the middle loses only that entry', async () => {
    const { open, path, tickets } = await threeEntries();
    const bytes = readFileSync(path);
    bytes[tickets[1]!.offset + FRAME_HEADER + 40]! ^= 0xff;
    writeFileSync(path, bytes);
    const { got, result } = await replayAll(await open());
    expect(replayedIds(got)).toEqual([0, 20]);
    expect(result.dropped).toBe(1);
  });

  test('a damaged length field is survived by finding the next entry', async () => {
    const { open, path, tickets } = await threeEntries();
    const bytes = readFileSync(path);
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(tickets[1]!.offset + 4, 7, true);
    writeFileSync(path, bytes);
    const { got, result } = await replayAll(await open());
    expect(replayedIds(got)).toEqual([0, 20]);
    expect(result.dropped).toBe(1);
  });

  test('a foreign or empty file replays nothing and is not fatal', async () => {
    const { open, opts } = setup();
    writeFileSync(join(opts.directory, '0000000000000007.wal'), 'not a wal file');
    writeFileSync(join(opts.directory, '0000000000000008.wal'), '');
    const { result } = await replayAll(await open());
    expect(result).toEqual({ files: 2, records: 0, dropped: 1, skipped: 0 });
    expect(walFiles(opts.directory)).toEqual([]);
  });
});


describe('Wal release records and failures', () => {
  test('a release recorded in a later segment keeps a flushed entry from being replayed', async () => {
    const { open } = setup({ maxSizeBytes: 32 * 1024 });
    const wal = await open();
    const a = await wal.append('db', [sampleBatch(200, 0)]);
    const b = await wal.append('db', [sampleBatch(200, 200)]);
    const c = await wal.append('db', [sampleBatch(200, 400)]); // rotates: a and b stay in the first segment
    expect(c.segment).toBeGreaterThan(a.segment);
    wal.release(a);
    await tick();
    const { got, result } = await replayAll(await open()); // crash
    expect(replayedIds(got)).toEqual([200, 400]);
    expect(result.skipped).toBe(1);
    expect(b.segment).toBe(a.segment);
  });

  test('a failed append answers 503, is counted, and makes health degraded', async () => {
    const { open, opts, metrics } = setup();
    const wal = await open();
    rmSync(opts.directory, { recursive: true });
    const err = await wal.append('db', [sampleBatch(3)]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(503);
    expect((err as AppError).message).toMatch(/^cannot append to WAL: .*ENOENT/);
    expect(metrics.walFailedWrites.value()).toBe(1);
    expect(metrics.walRecordsPreserved.value()).toBe(0);
    expect(wal.health()).toMatchObject({ status: 'degraded', healthy: false });
    expect(wal.health().last_error).toMatch(/^cannot append: /);
  });
});

import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toolPresent } from '../../tests/helpers/ci.ts';
import { cachedBytes } from '../lib/page-cache-test-support.ts';
import { Segment } from './segment.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-segment-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test.skipIf(process.platform !== 'linux')('a synced segment leaves only its last partial page in the page cache, and keeps every byte', async () => {
  const seg = Segment.create(dir, 1);
  const entry = new Uint8Array(100_000).map((_, i) => i * 7);
  seg.write(entry);
  const unsynced = cachedBytes(seg.path);
  await seg.sync('fdatasync');
  const synced = cachedBytes(seg.path);
  seg.write(entry);
  await seg.close('fdatasync');
  const closed = cachedBytes(seg.path);
  const bytes = new Uint8Array(await Bun.file(seg.path).arrayBuffer());
  expect(bytes.length).toBe(seg.size);
  expect(bytes.subarray(seg.size - entry.length)).toEqual(entry);
  expect(bytes.subarray(seg.size - 2 * entry.length, seg.size - entry.length)).toEqual(entry);
  // Without fincore (util-linux-extra) the page cache cannot be read: passed over locally, a failure under CI.
  if (toolPresent(unsynced !== null && synced !== null && closed !== null, 'fincore (util-linux-extra)')) {
    expect(unsynced).toBeGreaterThan(90_000);
    expect(synced).toBeLessThanOrEqual(4096);
    expect(closed).toBeLessThanOrEqual(4096);
  }
});

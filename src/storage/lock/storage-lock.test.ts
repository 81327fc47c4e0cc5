import { afterEach, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileLockSlot } from './lock-slot.ts';
import { StorageLock, StorageLockedError } from './storage-lock.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-lock-unit-'));
  dirs.push(dir);
  let clock = 1_000_000;
  const logs: string[] = [];
  const logger = { warn: (m: string) => void logs.push(`warn ${m}`), error: (m: string) => void logs.push(`error ${m}`) };
  const opts = { expiryMs: 60_000, logger, now: () => clock, alive: () => true };
  const record = () => JSON.parse(readFileSync(join(dir, '.svc.lock'), 'utf8'));
  return { slot: fileLockSlot(dir), opts, logs, record, advance: (ms: number) => void (clock += ms) };
}

test('a held lock refuses a second taker, renews its heartbeat, and is removed on release', async () => {
  const t = setup();
  const first = await StorageLock.acquire(t.slot, t.opts);
  await expect(StorageLock.acquire(t.slot, t.opts)).rejects.toBeInstanceOf(StorageLockedError);
  t.advance(50_000);
  await first.heartbeat();
  expect(Date.parse(t.record().heartbeat_at)).toBe(1_050_000);
  // 50 s after the renewal: still within the expiry, so still held.
  t.advance(50_000);
  await expect(StorageLock.acquire(t.slot, t.opts)).rejects.toThrow(/^cannot start: the storage is in use by another server: /);
  await first.release();
  const again = await StorageLock.acquire(t.slot, t.opts);
  await again.release();
  expect(t.logs).toEqual([]);
});

test('a lock past its expiry is taken over with a warning; the old holder learns it lost the lock and leaves it alone', async () => {
  const t = setup();
  const old = await StorageLock.acquire(t.slot, t.opts);
  t.advance(60_001);
  const taker = await StorageLock.acquire(t.slot, t.opts);
  const takerOwner = t.record().owner;
  expect(t.logs).toEqual(['warn taking over a stale storage lock']);
  expect(old.isLost).toBe(false);
  await old.heartbeat();
  expect(old.isLost).toBe(true);
  expect(t.logs[1]).toBe('error the storage lock was taken by another server; this server must stop writing');
  await old.release();
  expect(t.record().owner).toBe(takerOwner);
  await taker.release();
});

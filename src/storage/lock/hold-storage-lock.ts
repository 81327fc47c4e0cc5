/**
 * The storage lock as the server start needs it: taken before anything touches the data; another live
 * holder stops the start (StorageLockedError); a store that cannot be reached or refuses the call
 * does not, the lock is then retried in the background and /ready says why until it is held.
 */
import { messageOf } from '../../lib/errors.ts';
import type { LockSlot } from './lock-slot.ts';
import { StorageLock, StorageLockedError, type StorageLockOptions } from './storage-lock.ts';

/** The lock while the server runs: whether it is held (and if not, why), and its release. */
export interface HeldStorageLock {
  /** Null once held; else why not (for /ready and writes). */
  problem(): string | null;
  release(): Promise<void>;
}

/** Takes the lock now, or keeps trying every `retryMs` while the store fails; throws when another server holds it. */
export async function holdStorageLock(slot: LockSlot, opts: StorageLockOptions & { retryMs: number }): Promise<HeldStorageLock> {
  let lock: StorageLock | null = null;
  let problem: string | null = null;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const attempt = async (): Promise<void> => {
    try {
      lock = await StorageLock.acquire(slot, opts);
      if (stopped) await lock.release();
      problem = null;
    } catch (err) {
      if (err instanceof StorageLockedError && problem === null) throw err;
      problem = `cannot take the storage lock ${slot.location}: ${messageOf(err)}`;
      if (!stopped) {
        timer = setTimeout(() => void attempt().catch(() => undefined), opts.retryMs);
        timer.unref?.();
      }
    }
  };
  await attempt();
  if (problem) opts.logger.error('storage lock not taken yet; retrying while the store fails', { lock: slot.location, error: problem });
  return {
    problem: () => ((lock as StorageLock | null)?.isLost ? `the storage lock ${slot.location} was taken over by another server` : problem),
    async release() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await (lock as StorageLock | null)?.release();
    },
  };
}

/**
 * The lock of a cluster node: many nodes share one bucket by design, and etcd's elections (one active
 * writer, one active compactor) and the shared manifest's transactions keep them from colliding.
 */
export const CLUSTER_SHARED_STORAGE: HeldStorageLock = { problem: () => null, release: async () => {} };

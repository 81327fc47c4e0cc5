/**
 * What the server may promise while its storage misbehaves. A store that answers with an error (a
 * bucket or container that does not exist, refused credentials) can store nothing: writes are refused
 * with 503 rather than acknowledged. A store that does not answer at all is an outage: writes are still
 * buffered (bounded, and in the WAL when it is on) and flushed when it returns. Without the storage
 * lock nothing is written either.
 */
import type { StorageHealth } from './cache/storage-health.ts';
import type { HeldStorageLock } from './lock/hold-storage-lock.ts';

/** The two questions the rest of the server asks about storage. */
export interface StorageGate {
  /** Why writes must be refused now, or null. */
  writeProblem(): string | null;
  /** Why /ready must fail now (credential problems are left to server.storage_credentials_fail_ready), or null. */
  readyProblem(): string | null;
}

/** The gate over one store's health and the storage lock. */
export function storageGate(health: StorageHealth, lock: HeldStorageLock): StorageGate {
  const view = () => health.view();
  return {
    writeProblem() {
      const v = view();
      if (v.state === 'failing') return `storage ${v.location ?? v.backend} cannot store data: ${v.error ?? 'the store refused the last call'}`;
      return lock.problem();
    },
    readyProblem() {
      const v = view();
      if (v.credentials !== 'ok') return null;
      if (v.state === 'healthy') return lock.problem();
      return `storage ${v.location ?? v.backend} is ${v.state}: ${v.error ?? 'no answer'}`;
    },
  };
}

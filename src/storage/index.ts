/** Where data files live: the ObjectStore port, its backends, and the data-file key layout. */
export type { ObjectStore, ObjectInfo, PutSource } from './object-store.ts';
export { assertKey, assertPrefix, dataFileKey, parseDataFileKey, uniqueNanos } from './keys.ts';
export { LocalObjectStore } from './local/local-object-store.ts';
export { meteredStore } from './metered-store.ts';
export { FileReaper } from './file-reaper.ts';
export { openObjectStore, type OpenedStore } from './open-object-store.ts';
export { StorageHealth, type StorageHealthView, type CredentialState } from './cache/storage-health.ts';
export { CLUSTER_SHARED_STORAGE, holdStorageLock, type HeldStorageLock } from './lock/hold-storage-lock.ts';
export { StorageLock, StorageLockedError, type LockRecord } from './lock/storage-lock.ts';
export { fileLockSlot, remoteLockSlot, LOCK_NAME, type LockSlot } from './lock/lock-slot.ts';
export { storageGate, type StorageGate } from './storage-gate.ts';

/**
 * Builds the configured ObjectStore (`storage.backend`): local disk, or S3 / Azure behind the read
 * cache. The composition root calls this once and gets the store, its health for /health and /ready,
 * and the folder DuckDB may read data files from.
 */
import { StartupError } from '../lib/errors.ts';
import { resolve } from 'node:path';
import type { Config } from '../config/index.ts';
import { ReadCache } from './cache/read-cache.ts';
import type { RemoteBackend } from './cache/remote-backend.ts';
import { RemoteObjectStore } from './cache/remote-object-store.ts';
import { StorageHealth } from './cache/storage-health.ts';
import { LocalObjectStore } from './local/local-object-store.ts';
import type { ObjectStore } from './object-store.ts';
import { fileLockSlot, remoteLockSlot, type LockSlot } from './lock/lock-slot.ts';

/** The opened store and what the rest of the process needs to know about it. */
export interface OpenedStore {
  store: ObjectStore;
  health: StorageHealth;
  /** Folder under which every `localPath` and `scratchPath` lies (DuckDB's allowed directory: it reads and writes there). */
  readRoot: string;
  /** Checks credentials and reachability now (remote stores); the result lands in `health`. Never throws. */
  probe(): Promise<void>;
  /** Where this storage's one-server lock lives. */
  lockSlot: LockSlot;
  /** Stops the periodic probe. */
  close(): void;
}

/** How often a remote store is probed, so /health is right even when nothing is written. */
const PROBE_EVERY_MS = 30_000;
/** How often while it fails, so the server recovers by itself soon after the store comes back. */
const REPROBE_FAILING_MS = 2_000;

/** Opens the backend `storage.backend` names; `inUse` tells the read cache which keys running queries hold. */
export async function openObjectStore(
  storage: Config['storage'],
  opts: {
    inUse?: (key: string) => boolean;
    logger?: { info(msg: string, fields?: Record<string, unknown>): void };
    /** S3 storage class or Azure access tier of every upload (the cold tier's); empty: the default. */
    storageClass?: string;
  } = {},
): Promise<OpenedStore> {
  if (storage.backend === 'local') {
    const store = await new LocalObjectStore(storage.local_path, { dropPageCache: storage.drop_page_cache }).open();
    return { store, health: new StorageHealth('local'), readRoot: store.root, lockSlot: fileLockSlot(store.root), probe: async () => {}, close: () => {} };
  }
  const remote = await remoteBackend(storage, opts.storageClass ?? '');
  const cache = await new ReadCache({ dir: storage.cache_path, maxBytes: storage.cache_size, inUse: opts.inUse }).open();
  const prefix = storage.backend === 's3' ? storage.s3_prefix : storage.azure_prefix;
  const store = new RemoteObjectStore(remote, cache, { prefix, revalidateMs: storage.cache_revalidate });
  let timer: ReturnType<typeof setTimeout>;
  const schedule = (delayMs: number) => {
    timer = setTimeout(() => {
      const before = store.health.state;
      void store.probe().finally(() => {
        const now = store.health.view();
        if (before !== 'healthy' && now.state === 'healthy') opts.logger?.info('storage works again; writes are accepted', { backend: now.backend, location: now.location });
        schedule(now.state === 'healthy' ? PROBE_EVERY_MS : REPROBE_FAILING_MS);
      });
    }, delayMs);
    timer.unref?.();
  };
  // The first one soon: the start-up probe's outcome is not known yet when this is armed.
  schedule(REPROBE_FAILING_MS);
  const lockSlot = remoteLockSlot(remote, store.keyPrefix);
  return { store, health: store.health, readRoot: resolve(storage.cache_path), lockSlot, probe: () => store.probe(), close: () => clearTimeout(timer) };
}

/** The configured cloud backend; each SDK is loaded only when its backend is used (about 50 ms each). */
async function remoteBackend(s: Config['storage'], storageClass: string): Promise<RemoteBackend> {
  if (s.backend === 's3') {
    if (!s.s3_bucket) throw new StartupError('config', 'storage.backend is s3 but storage.s3_bucket is empty');
    const { S3Backend } = await import('./s3/s3-backend.ts');
    return new S3Backend({
      bucket: s.s3_bucket,
      region: s.s3_region,
      endpoint: s.s3_endpoint,
      pathStyle: s.s3_path_style,
      accessKey: s.s3_access_key,
      secretKey: s.s3_secret_key,
      storageClass,
    });
  }
  if (!s.azure_container) throw new StartupError('config', 'storage.backend is azure but storage.azure_container is empty');
  const { AzureBackend } = await import('./azure/azure-backend.ts');
  return new AzureBackend({
    container: s.azure_container,
    connectionString: s.azure_connection_string,
    account: s.azure_account,
    key: s.azure_key,
    endpoint: s.azure_endpoint,
    sasToken: s.azure_sas_token,
    accessTier: storageClass,
  });
}

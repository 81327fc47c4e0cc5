/**
 * Opens the cold tier's store from tiering.cold_* (the keys of [storage] under a `cold_` prefix),
 * with the same read cache as the hot remote store but in its own folder `<storage.cache_path>/cold`
 * and trusted for `cold_cache_revalidate` (cold data files are immutable under their keys).
 */
import { join } from 'node:path';
import type { Config } from '../config/index.ts';
import { StartupError } from '../lib/errors.ts';
import { openObjectStore, type OpenedStore } from '../storage/index.ts';

/** The [storage] section the cold store is opened with. */
export function coldStorageSection(storage: Config['storage'], t: Config['tiering']): Config['storage'] {
  return {
    ...storage,
    backend: t.cold_backend,
    local_path: t.cold_local_path,
    cache_path: join(storage.cache_path, 'cold'),
    cache_revalidate: t.cold_cache_revalidate,
    s3_bucket: t.cold_s3_bucket,
    s3_region: t.cold_s3_region,
    s3_endpoint: t.cold_s3_endpoint,
    s3_path_style: t.cold_s3_path_style,
    s3_access_key: t.cold_s3_access_key,
    s3_secret_key: t.cold_s3_secret_key,
    s3_prefix: t.cold_s3_prefix,
    azure_container: t.cold_azure_container,
    azure_connection_string: t.cold_azure_connection_string,
    azure_account: t.cold_azure_account,
    azure_key: t.cold_azure_key,
    azure_endpoint: t.cold_azure_endpoint,
    azure_sas_token: t.cold_azure_sas_token,
    azure_prefix: t.cold_azure_prefix,
  };
}

/** Opens and probes the cold store; a misconfigured one stops the start with a clear error. */
export async function openColdStore(
  storage: Config['storage'],
  t: Config['tiering'],
  opts: { inUse: (key: string) => boolean; logger: { info(msg: string, fields?: Record<string, unknown>): void } },
): Promise<OpenedStore> {
  const cold = coldStorageSection(storage, t);
  if (cold.backend === 'local' && storage.backend === 'local' && join(cold.local_path) === join(storage.local_path))
    throw new StartupError('config', 'tiering.cold_local_path must not be storage.local_path: the cold tier needs a place of its own');
  try {
    const opened = await openObjectStore(cold, { ...opts, storageClass: t.cold_storage_class });
    await opened.probe();
    return opened;
  } catch (err) {
    if (err instanceof StartupError) throw new StartupError('config', err.detail.replace(/storage\.(\w+)/g, (_, k: string) => `tiering.cold_${k}`));
    throw err;
  }
}

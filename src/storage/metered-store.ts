/** An ObjectStore wrapper that counts operations, bytes and failures in the svc_storage_* metrics. */
import type { SvcMetrics } from '../observability/index.ts';
import type { ObjectInfo, ObjectStore, PutSource } from './object-store.ts';

/** Wraps `store` so every write, read and failure moves the svc_storage_* counters. */
export function meteredStore(store: ObjectStore, metrics: SvcMetrics): ObjectStore {
  const fail = (err: unknown): never => {
    // A request that was cancelled or timed out is not a storage failure.
    const name = (err as { name?: string } | null)?.name;
    if (name !== 'AbortError' && name !== 'TimeoutError') metrics.storageErrors.inc();
    throw err;
  };
  return {
    backend: store.backend,
    async put(key: string, source: PutSource): Promise<ObjectInfo> {
      const info = await store.put(key, source).catch(fail);
      metrics.storageWrites.inc();
      metrics.storageWriteBytes.inc(info.bytes);
      return info;
    },
    async get(key: string): Promise<Uint8Array> {
      const bytes = await store.get(key).catch(fail);
      metrics.storageReads.inc();
      metrics.storageReadBytes.inc(bytes.byteLength);
      return bytes;
    },
    async stream(key: string): Promise<ReadableStream<Uint8Array>> {
      const s = await store.stream(key).catch(fail);
      metrics.storageReads.inc();
      return s;
    },
    list: (prefix) => store.list(prefix).catch(fail),
    stat: (key) => store.stat(key).catch(fail),
    delete: (key) => store.delete(key).catch(fail),
    deleteMany: (keys) => store.deleteMany(keys).catch(fail),
    // A remote store downloads here (a cold query): a failure is a storage failure like any other.
    localPath: (key) => store.localPath(key).catch(fail),
    scratchPath: (suffix) => store.scratchPath(suffix),
  };
}

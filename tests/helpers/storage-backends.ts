/**
 * The three storage backends as end-to-end tests need them: the environment that points a server at
 * one (local folder, s3rver bucket, Azurite container, each under a prefix), and a store a test uses
 * to look at what the server wrote. s3rver and Azurite are started once per test file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AzureBackend } from '../../src/storage/azure/azure-backend.ts';
import { ReadCache } from '../../src/storage/cache/read-cache.ts';
import { RemoteObjectStore } from '../../src/storage/cache/remote-object-store.ts';
import { LocalObjectStore, type ObjectStore } from '../../src/storage/index.ts';
import { S3Backend } from '../../src/storage/s3/s3-backend.ts';
import { startAzurite, type TestAzurite } from './azurite.ts';
import { queryFiles } from './parquet.ts';
import { S3RVER_KEY, startS3rver, type TestS3 } from './s3rver.ts';

/** One backend: how a server reaches it, and how a test looks inside. */
export interface TestBackend {
  name: 'local' | 's3' | 'azure';
  /** SVC_STORAGE_* for a server whose data lives under `prefix`. */
  env(prefix: string): Record<string, string>;
  /** A store over the same data (its own cache), for inspection. */
  open(prefix: string): Promise<ObjectStore>;
}

/** Running emulators plus a scratch folder; `close` stops everything. */
export interface TestBackends {
  all: TestBackend[];
  s3: TestS3;
  azurite: TestAzurite;
  dir: string;
  close(): Promise<void>;
}

/** Starts s3rver (bucket `bucket`) and Azurite (container `bucket`) and describes the three backends. */
export async function startBackends(bucket: string): Promise<TestBackends> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-backends-'));
  const [s3, azurite] = await Promise.all([startS3rver([bucket]), startAzurite()]);
  await azurite.createContainer(bucket);
  let n = 0;
  const cache = () => new ReadCache({ dir: join(dir, `cache-${n++}`), maxBytes: 1 << 30 }).open();
  const all: TestBackend[] = [
    {
      name: 'local',
      env: (prefix) => ({ SVC_STORAGE_BACKEND: 'local', SVC_STORAGE_LOCAL_PATH: join(dir, 'local', prefix) }),
      open: (prefix) => new LocalObjectStore(join(dir, 'local', prefix)).open(),
    },
    {
      name: 's3',
      env: (prefix) => s3.env(bucket, prefix),
      open: async (prefix) =>
        new RemoteObjectStore(new S3Backend({ bucket, region: 'us-east-1', endpoint: s3.endpoint, pathStyle: true, ...S3RVER_KEY }), await cache(), { prefix }),
    },
    {
      name: 'azure',
      env: (prefix) => azurite.env(bucket, prefix),
      open: async (prefix) => new RemoteObjectStore(new AzureBackend({ container: bucket, connectionString: azurite.connectionString }), await cache(), { prefix }),
    },
  ];
  return {
    all,
    s3,
    azurite,
    dir,
    async close() {
      await Promise.all([s3.close(), azurite.close()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Rows in the Parquet files under `prefix` of a store, read with DuckDB from local copies. */
export async function rowsInStore(store: ObjectStore, prefix: string): Promise<number> {
  const keys = (await store.list(prefix)).map((o) => o.key).filter((k) => k.endsWith('.parquet'));
  if (keys.length === 0) return 0;
  const dir = mkdtempSync(join(tmpdir(), 'svc-rows-'));
  try {
    for (const [i, k] of keys.entries()) writeFileSync(join(dir, `${i}.parquet`), await store.get(k));
    const [row] = await queryFiles(dir, 'SELECT count(*) AS n FROM $files(*.parquet)', '.');
    return Number(row!.n);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

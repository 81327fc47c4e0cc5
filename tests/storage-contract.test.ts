/**
 * The ObjectStore contract (tests/storage-contract-suite.ts) against each backend: local disk, an
 * s3rver and an Azurite started here on random loopback ports. Part sizes are set small so large
 * objects take the multipart / block path.
 */
import { afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AzureBackend } from '../src/storage/azure/azure-backend.ts';
import { ReadCache } from '../src/storage/cache/read-cache.ts';
import { RemoteObjectStore } from '../src/storage/cache/remote-object-store.ts';
import { LocalObjectStore } from '../src/storage/index.ts';
import { S3Backend } from '../src/storage/s3/s3-backend.ts';
import { startAzurite } from './helpers/azurite.ts';
import { S3RVER_KEY, startS3rver } from './helpers/s3rver.ts';
import { objectStoreContract } from './storage-contract-suite.ts';

const tmp = mkdtempSync(join(tmpdir(), 'svc-contract-'));
const [s3, azurite] = await Promise.all([startS3rver(['contract']), startAzurite()]);
await azurite.createContainer('contract');
afterAll(async () => {
  await Promise.all([s3.close(), azurite.close()]);
  rmSync(tmp, { recursive: true, force: true });
});

let n = 0;
/** Each store gets its own cache folder, as each server has its own disk. */
const cache = () => new ReadCache({ dir: join(tmp, `cache-${n++}`), maxBytes: 256 * 1024 * 1024 }).open();

objectStoreContract('local', async (prefix) => new LocalObjectStore(join(tmp, 'local', prefix)).open());

/**
 * s3rver writes an object's file in place, so two concurrent uploads of one key can interleave into a
 * mixed object, which S3 never produces (RemoteBackend.upload: whole or not at all). Here uploads of one
 * key wait for each other at the backend, as S3's own PUTs are atomic; the store above them, whose cache
 * is what the contract checks, still takes its puts concurrently.
 */
function wholeUploads(backend: S3Backend): S3Backend {
  const last = new Map<string, Promise<unknown>>();
  const upload = backend.upload.bind(backend);
  backend.upload = (key, source) => {
    const next = (last.get(key) ?? Promise.resolve()).catch(() => undefined).then(() => upload(key, source));
    last.set(key, next);
    return next;
  };
  return backend;
}

objectStoreContract('s3 (s3rver)', async (prefix) => {
  const backend = new S3Backend({ bucket: 'contract', region: 'us-east-1', endpoint: s3.endpoint, pathStyle: true, ...S3RVER_KEY, partSizeBytes: 5 * 1024 * 1024 });
  return new RemoteObjectStore(wholeUploads(backend), await cache(), { prefix });
});

objectStoreContract('azure (azurite)', async (prefix) => {
  const backend = new AzureBackend({ container: 'contract', connectionString: azurite.connectionString, blockSizeBytes: 1024 * 1024 });
  return new RemoteObjectStore(backend, await cache(), { prefix });
});

/**
 * Cloud failures, end to end: an object store that goes away mid-way loses no acknowledged row (the
 * flush keeps them buffered and in the WAL, and retries until the store is back); refused credentials
 * and a missing bucket or container show in /health, /ready (when configured), metrics and the
 * flush error, with messages that name the key, the location and the provider's code.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { AzureBackend } from '../src/storage/azure/azure-backend.ts';
import { ReadCache } from '../src/storage/cache/read-cache.ts';
import { RemoteObjectStore } from '../src/storage/cache/remote-object-store.ts';
import { S3Backend } from '../src/storage/s3/s3-backend.ts';
import { AZURITE_ACCOUNT, AZURITE_KEY, startAzurite } from './helpers/azurite.ts';
import { waitFor } from './helpers/parquet.ts';
import { S3RVER_KEY, startS3rver } from './helpers/s3rver.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { rowsInStore, startBackends } from './helpers/storage-backends.ts';

const backends = await startBackends('fail');
afterAll(() => backends.close());
const s3 = backends.s3;
const azurite = backends.azurite;

const T0 = 1_700_000_000_000_000_000n;
const write = (s: TestServer, n: number, offset: number) =>
  s.fetch('/api/v1/write/line-protocol', {
    method: 'POST',
    headers: { 'x-svc-database': 'out' },
    body: Array.from({ length: n }, (_, i) => `m v=${i + offset} ${T0 + BigInt(i + offset) * 1_000_000_000n}`).join('\n'),
  });
const stats = async (s: TestServer) => (await json(s, 'GET', '/api/v1/write/line-protocol/stats')).body.buffer;
const hot = async (s: TestServer) => (await json(s, 'GET', '/health')).body.storage.hot;
const storageErrors = async (s: TestServer) => Number(/svc_storage_errors_total (\d+)/.exec(await (await s.fetch('/metrics')).text())?.[1] ?? 0);

describe('an object store outage', () => {
  test('s3 stops mid-way: writes are acknowledged, flushes fail and retry, every row arrives after it returns', async () => {
    const outage = await startS3rver(['out']);
    const s = await startServer({ env: { ...outage.env('out', 'srv'), SVC_INGEST_MAX_BUFFER_AGE_MS: '600000', SVC_WAL_ENABLED: 'true' } });
    try {
      expect((await write(s, 3, 0)).status).toBe(204);
      expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);

      await outage.stop();
      expect((await write(s, 4, 100)).status).toBe(204);
      const flush = s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
      await waitFor(async () => (await stats(s)).flush_failures > 0, 30_000, 'a failed flush');
      const st = await stats(s);
      expect(st.last_error).toMatch(/^cannot write srv\/out\/m\/\S+\.parquet to s3:\/\/out: ECONNREFUSED/);
      expect(st.in_flight_records + st.buffered_records).toBe(4);
      expect(await hot(s)).toMatchObject({ backend: 's3', state: 'unreachable' });
      expect(await storageErrors(s)).toBeGreaterThan(0);

      await outage.start();
      expect((await flush).status).toBe(200);
      expect(await hot(s)).toMatchObject({ credentials: 'ok', state: 'healthy' });
      // Looked at through the outage s3rver, not the shared one.
      const direct = new RemoteObjectStore(
        new S3Backend({ bucket: 'out', region: 'us-east-1', endpoint: outage.endpoint, pathStyle: true, ...S3RVER_KEY }),
        await new ReadCache({ dir: `${s.dir}/inspect-cache`, maxBytes: 1 << 30 }).open(),
        { prefix: 'srv' },
      );
      expect(await rowsInStore(direct, 'out/')).toBe(7);
    } finally {
      await s.cleanup();
      await outage.close();
    }
  }, 90_000);
  test('s3 down and the server crashes: the WAL brings the unflushed rows back once s3 returns', async () => {
    const outage = await startS3rver(['out']);
    const env = { ...outage.env('out', 'crash'), SVC_INGEST_MAX_BUFFER_AGE_MS: '600000', SVC_WAL_ENABLED: 'true' };
    const s = await startServer({ env, keepDir: true });
    try {
      await outage.stop();
      expect((await write(s, 5, 0)).status).toBe(204);
      void s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' }).catch(() => undefined);
      await waitFor(async () => (await stats(s)).flush_failures > 0, 30_000, 'a failed flush');
      await s.kill();
      await outage.start();
      const again = await startServer({ env, dir: s.dir });
      try {
        expect((await again.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
        const direct = new RemoteObjectStore(
          new S3Backend({ bucket: 'out', region: 'us-east-1', endpoint: outage.endpoint, pathStyle: true, ...S3RVER_KEY }),
          await new ReadCache({ dir: `${s.dir}/inspect-cache`, maxBytes: 1 << 30 }).open(),
          { prefix: 'crash' },
        );
        expect(await rowsInStore(direct, 'out/')).toBe(5);
      } finally {
        await again.cleanup();
      }
    } finally {
      await s.kill();
      rmSync(s.dir, { recursive: true, force: true });
      await outage.close();
    }
  }, 90_000);
});

describe('refused credentials and missing buckets', () => {
  test('s3, unknown key: the server runs, /health says expired, writes get 503 (never a 2xx that cannot be stored), /ready fails only when configured to', async () => {
    // s3rver checks the access key id (not the secret): an unknown id is refused as S3 would.
    const env = { ...s3.env('fail', 'creds'), SVC_STORAGE_S3_ACCESS_KEY: 'nobody', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' };
    const lenient = await startServer({ env });
    try {
      expect(await hot(lenient)).toMatchObject({ backend: 's3', credentials: 'expired', state: 'failing' });
      expect((await hot(lenient)).error).toMatch(/^cannot \S+ .*s3:\/\/fail: InvalidAccessKeyId/);
      expect((await lenient.fetch('/ready')).status).toBe(200);
      const refused = await write(lenient, 2, 0);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(((await refused.json()) as { error: string }).error).toMatch(/^cannot accept write: storage s3:\/\/fail\/creds\/? cannot store data: cannot .*InvalidAccessKeyId/);
      expect((await stats(lenient)).buffered_records).toBe(0);
      expect(lenient.output()).toMatch(/storage is not usable/);
    } finally {
      await lenient.cleanup();
    }
    const strict = await startServer({ env: { ...env, SVC_SERVER_STORAGE_CREDENTIALS_FAIL_READY: 'true' }, waitReady: false });
    try {
      await waitFor(async () => (await strict.fetch('/ready')).status === 503 && (await hot(strict)).credentials === 'expired', 20_000, '/ready 503');
      expect((await json(strict, 'GET', '/ready')).body.reason).toMatch(/^storage: storage credentials expired \(cannot .*InvalidAccessKeyId/);
    } finally {
      await strict.cleanup();
    }
  }, 90_000);

  test('s3 backend: a missing bucket and a wrong key are named in the error', async () => {
    const missing = new S3Backend({ bucket: 'no-such-bucket', region: 'us-east-1', endpoint: s3.endpoint, pathStyle: true, ...S3RVER_KEY, maxAttempts: 1 });
    await expect(missing.upload('a/b.parquet', new Uint8Array(3))).rejects.toThrow(/^cannot write a\/b\.parquet to s3:\/\/no-such-bucket: NoSuchBucket/);
    await expect(missing.probe()).rejects.toThrow(/NoSuchBucket/);
    const denied = new S3Backend({ bucket: 'fail', region: 'us-east-1', endpoint: s3.endpoint, pathStyle: true, accessKey: 'nobody', secretKey: 'x', maxAttempts: 1 });
    const err = await denied.upload('a/b.parquet', new Uint8Array(3)).catch((e: unknown) => e);
    expect(err).toMatchObject({ credentials: 'expired', reachable: true });
    expect(String((err as Error).message)).toMatch(/^cannot write a\/b\.parquet to s3:\/\/fail: InvalidAccessKeyId/);
  });

  test('azure backend: account + key + endpoint and SAS work; a wrong key or a missing container is named', async () => {
    // Retries on for the working clients: azurite now and then resets a kept-alive socket (ECONNRESET),
    // which the SDK's retry absorbs in real use; the failing clients below keep one try to fail fast.
    const keyed = new AzureBackend({ container: 'fail', account: AZURITE_ACCOUNT, key: AZURITE_KEY, endpoint: azurite.endpoint, maxTries: 3 });
    await keyed.upload('k/a.bin', new Uint8Array([1, 2]));
    expect([...(await keyed.get('k/a.bin'))]).toEqual([1, 2]);
    const sas = await azurite.accountSas();
    const viaSas = new AzureBackend({ container: 'fail', endpoint: azurite.endpoint, sasToken: sas, maxTries: 3 });
    expect((await viaSas.head('k/a.bin'))?.bytes).toBe(2);

    const wrongKey = new AzureBackend({ container: 'fail', account: AZURITE_ACCOUNT, key: Buffer.from('wrong').toString('base64'), endpoint: azurite.endpoint, maxTries: 1 });
    const err = await wrongKey.upload('k/b.bin', new Uint8Array(1)).catch((e: unknown) => e);
    expect(err).toMatchObject({ credentials: 'expired', reachable: true });
    expect(String((err as Error).message)).toMatch(/^cannot write k\/b\.bin to azure:\/\/devstoreaccount1\/fail: Authorization/);
    const noContainer = new AzureBackend({ container: 'missing', connectionString: azurite.connectionString, maxTries: 1 });
    await expect(noContainer.upload('k/c.bin', new Uint8Array(1))).rejects.toThrow(/ContainerNotFound/);
    expect(await noContainer.head('k/c.bin').catch((e: Error) => e.message)).toMatch(/ContainerNotFound/);
  });
});

describe('storage that fails from the start, or for long', () => {
  test('azure, missing container: /ready 503 and writes 503 with the reason; creating it later makes the server ready and writable by itself', async () => {
    const env = { ...azurite.env('later', 'late'), SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' };
    const s = await startServer({ env, waitReady: false });
    try {
      await waitFor(async () => (await s.fetch('/ready')).status === 503 && /ContainerNotFound/.test((await json(s, 'GET', '/ready')).body.reason ?? ''), 20_000, '/ready 503');
      expect((await json(s, 'GET', '/ready')).body.reason).toMatch(/storage azure:\/\/devstoreaccount1\/later\/late\/? is failing: cannot \S+ .*ContainerNotFound/);
      const refused = await write(s, 3, 0);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(((await refused.json()) as { error: string }).error).toMatch(/ContainerNotFound/);
      expect(s.output()).toMatch(/storage is not usable; writes are refused/);

      await azurite.createContainer('later');
      await waitFor(async () => (await s.fetch('/ready')).status === 200, 20_000, '/ready 200 once the container exists');
      expect(s.output()).toMatch(/storage works again; writes are accepted backend=azure/);
      expect((await write(s, 3, 0)).status).toBe(204);
      expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
      expect((await json(s, 'POST', '/api/v1/query', { sql: 'SELECT count(*) AS n FROM out.m' })).body.data).toEqual([[3]]);
    } finally {
      await s.cleanup();
    }
  }, 90_000);

  test('s3 outage: held rows are bounded (503 past max_buffer_size x shard_count); SIGTERM exits in time and says how many rows the WAL keeps', async () => {
    const outage = await startS3rver(['bounded']);
    const env = {
      ...outage.env('bounded', 'b'),
      SVC_INGEST_MAX_BUFFER_AGE_MS: '600000',
      SVC_INGEST_MAX_BUFFER_SIZE: '10',
      SVC_INGEST_SHARD_COUNT: '2',
      SVC_WAL_ENABLED: 'true',
      SVC_SERVER_SHUTDOWN_TIMEOUT: '3s',
    };
    const s = await startServer({ env });
    try {
      await outage.stop();
      expect((await write(s, 5, 0)).status).toBe(204);
      void s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' }).catch(() => undefined);
      await waitFor(async () => (await stats(s)).failing === true, 30_000, 'a failed flush');
      let accepted = 5;
      let refused: Response | null = null;
      for (let i = 1; i <= 10 && !refused; i++) {
        const r = await write(s, 5, i * 10);
        if (r.status === 204) accepted += 5;
        else refused = r;
      }
      expect(refused?.status).toBe(503);
      expect(refused?.headers.get('retry-after')).toBe('5');
      expect(((await refused!.json()) as { error: string }).error).toMatch(/flushes are failing .* the most kept in memory \(ingest.max_buffer_size x ingest.shard_count = 20\)/);
      expect(accepted).toBeGreaterThanOrEqual(20);
      expect(accepted).toBeLessThan(30);
      const st = await stats(s);
      expect(st.buffered_records + st.in_flight_records).toBe(accepted);

      const started = performance.now();
      expect(await s.stop()).toBe(0);
      // The 3 s budget plus process start-up slack; a hang would take the test's own timeout.
      expect(performance.now() - started).toBeLessThan(15_000);
      expect(s.output()).toMatch(new RegExp(`could not flush ${accepted} rows before stopping.*the WAL keeps them`));
    } finally {
      await s.cleanup();
      await outage.close();
    }
  }, 90_000);
});

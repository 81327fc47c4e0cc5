/**
 * End to end against each storage backend (local, s3rver, Azurite): a real server writes, flushes and
 * queries, compacts, deletes, backs up, applies retention and restores; a second server with a new
 * metadata file on the same storage rebuilds its manifest from the listing; /health shows the tier.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { startBackends, rowsInStore, type TestBackend } from './helpers/storage-backends.ts';
import { waitFor } from './helpers/parquet.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

const backends = await startBackends('e2e');
afterAll(() => backends.close());

const HOUR_NS = 3_600_000_000_000n;
const T0 = 1_700_000_000_000_000_000n;
const lines = (n: number, offset = 0) =>
  Array.from({ length: n }, (_, i) => `cpu,host=h${i % 2} usage=${i + offset}.5 ${T0 + BigInt(i + offset) * (HOUR_NS / 2n)}`).join('\n');

async function write(s: TestServer, body: string): Promise<void> {
  const res = await s.fetch('/api/v1/write/line-protocol', { method: 'POST', headers: { 'x-svc-database': 'e2e' }, body });
  expect(res.status).toBe(204);
}

async function count(s: TestServer): Promise<number> {
  const r = await json(s, 'POST', '/api/v1/query', { sql: 'SELECT count(*) AS n FROM e2e.cpu' });
  expect(r.status).toBe(200);
  const data = r.body.data as unknown[][];
  return Number(data[0]![0]);
}

function backendTests(b: TestBackend) {
  describe(`storage backend ${b.name}, end to end`, () => {
    test('write -> flush -> query -> compaction -> delete -> backup -> retention -> restore; a second server on the same storage sees the data', async () => {
      const prefix = `p${Date.now().toString(36)}`;
      const env = { ...b.env(prefix), SVC_INGEST_MAX_BUFFER_AGE_MS: '600000', SVC_COMPACTION_HOURLY_MIN_FILES: '2', SVC_DELETE_ENABLED: 'true' };
      const a = await startServer({ env });
      try {
        const health = await json(a, 'GET', '/health');
        expect(health.body.storage.hot).toMatchObject({ backend: b.name, credentials: 'ok', state: 'healthy' });

        await write(a, lines(6));
        expect((await a.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
        const store = await b.open(prefix);
        const keys = (await store.list('e2e/cpu/')).map((o) => o.key);
        // Six rows half an hour apart: three hour files, under the prefix only.
        expect(keys).toHaveLength(3);
        expect(await rowsInStore(store, 'e2e/')).toBe(6);
        expect(await count(a)).toBe(6);

        // Compaction: a second flush into the same three hours, then one file per hour again.
        await write(a, lines(6, 0).replace(/usage=/g, 'idle='));
        expect((await a.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);
        expect(await store.list('e2e/cpu/')).toHaveLength(6);
        expect((await json(a, 'POST', '/api/v1/compaction/trigger', { database: 'e2e' })).status).toBe(200);
        await waitFor(async () => (await json(a, 'GET', '/api/v1/compaction/history')).body.history?.[0]?.status === 'completed', 60_000, 'compaction');
        await waitFor(async () => (await store.list('e2e/cpu/')).length === 3, 20_000, 'replaced files deleted');
        expect(await rowsInStore(store, 'e2e/')).toBe(6);

        // Delete: rewrites the files that hold host h1 (three rows).
        const del = await json(a, 'POST', '/api/v1/delete', { database: 'e2e', measurement: 'cpu', where: "host = 'h1'", confirm: true });
        expect(del.status).toBe(200);
        // A rewrite lands its new file before the old one goes: a listing may name a file gone by the read.
        await waitFor(async () => (await rowsInStore(store, 'e2e/').catch(() => -1)) === 3, 20_000, 'rows deleted');
        expect(await count(a)).toBe(3);

        // Backup (data read through the store), then retention empties the measurement, then a restore
        // writes the backed-up files back through the store.
        const backup = await json(a, 'POST', '/api/v1/backup', {});
        expect(backup.status).toBe(202);
        const operation = async () => {
          let st: { status?: string } = {};
          await waitFor(async () => (st = (await json(a, 'GET', '/api/v1/backup/status')).body).status !== 'running', 60_000, 'backup operation');
          return st;
        };
        expect(await operation()).toMatchObject({ status: 'completed' });
        const policy = await json(a, 'POST', '/api/v1/retention', { name: 'old', database: 'e2e', retention_days: 30 });
        expect(policy.status).toBe(201);
        const run = await json(a, 'POST', `/api/v1/retention/${policy.body.id}/execute`);
        expect(run.body).toMatchObject({ status: 'success', rows_deleted: 3 });
        expect(await count(a)).toBe(0);
        await waitFor(async () => (await rowsInStore(store, 'e2e/').catch(() => -1)) === 0, 20_000, 'retention removed the objects');
        const restore = await json(a, 'POST', '/api/v1/backup/restore', { backup_id: backup.body.backup_id, confirm: true, restore_metadata: false });
        expect(restore.status).toBe(202);
        expect(await operation()).toMatchObject({ status: 'completed' });
        expect(await count(a)).toBe(3);
        expect(await rowsInStore(store, 'e2e/')).toBe(3);
      } finally {
        await a.cleanup();
      }

      // A new metadata file (new working directory), the same storage: the manifest comes from the listing.
      const second = await startServer({ env });
      try {
        const m = await json(second, 'GET', '/api/v1/measurements');
        expect(JSON.stringify(m.body)).toContain('cpu');
        // Cold: this server's read cache is empty, so the query downloads the objects; warm: it reuses them.
        expect(await count(second)).toBe(3);
        expect(await count(second)).toBe(3);
      } finally {
        await second.cleanup();
      }
    });
  });
}

for (const b of backends.all) backendTests(b);

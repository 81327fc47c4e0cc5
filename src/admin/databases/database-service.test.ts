import { expect, test } from 'bun:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseStore, FileManifestStore, migrations, openCatalog } from '../../catalog/index.ts';
import { Logger } from '../../observability/index.ts';
import { FileReaper, LocalObjectStore } from '../../storage/index.ts';
import { MeasurementLocks } from '../measurement-locks.ts';
import { DatabaseService } from './database-service.ts';
import { UNRESTRICTED } from '../../lib/table-access.ts';

const HOUR = Date.UTC(2024, 0, 1) * 1000;

// A write that arrives while a database is dropped is flushed as usual: its file is put (recorded as
// pending first) and registered right after. The drop's sweep of unknown files must not delete such a
// file, or the manifest would list a file that is gone (every query of the measurement then fails).
test('dropping a database does not delete a file a flush has put but not yet registered', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-dbdrop-'));
  const catalog = openCatalog(join(dir, 'svc.db'), migrations);
  const manifest = new FileManifestStore(catalog);
  const store = await new LocalObjectStore(join(dir, 'data')).open();
  const logger = new Logger({ level: 'error', format: 'text', bufferSize: 10, write: () => {} });
  const databases = new DatabaseStore(catalog);
  databases.ensure('db');
  const put = async (key: string) => {
    const scratch = store.scratchPath('x.parquet');
    writeFileSync(scratch, 'PAR1');
    return store.put(key, { file: scratch });
  };
  const old = 'db/m/2024/01/01/00/m_20240101_000000_000000001.parquet';
  const info = await put(old);
  manifest.add([{ path: old, database: 'db', measurement: 'm', hour: HOUR, minTime: HOUR, maxTime: HOUR, rows: 1, bytes: info.bytes, columns: ['time'], seq: 1, createdAt: '' }]);
  const flushing = 'db/m/2024/01/01/00/m_20240101_000000_000000002.parquet';
  const orphan = 'db/m/2024/01/01/00/m_20240101_000000_000000003.parquet';
  await put(orphan);
  const service = new DatabaseService({
    databases, manifest, store, reaper: new FileReaper({ store, manifest, logger }), locks: new MeasurementLocks(), deleteEnabled: true, flushTimeoutMs: 1000,
    buffered: {
      measurements: () => [],
      // The new write's flush puts its file while the drop runs.
      dropDatabase: async () => {
        manifest.intend(flushing, 'drop');
        await put(flushing);
        return 0;
      },
    },
  });
  await service.drop('db', true, UNRESTRICTED);
  expect(await store.stat(old)).toBeNull();
  expect(await store.stat(orphan)).toBeNull();
  expect(await store.stat(flushing)).not.toBeNull();
});

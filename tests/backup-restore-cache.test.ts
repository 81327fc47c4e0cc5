/**
 * The query engine trusts DuckDB's cached Parquet footers without checking files again
 * (validate_external_file_cache = NO_VALIDATION, see src/duckdb/sandbox.ts), which is only right while
 * no storage key ever gets new content. A restore is the one writer that puts a backed-up file where a
 * live one may already be: here the live file under the backed-up key is damaged (other bytes, other
 * size) and has been queried, so DuckDB holds its footer. After the restore a query must return the
 * backed-up rows, not fail or read the restored bytes through the damaged file's footer.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { flush, manifestFiles, points, queryFiles, rows, waitFor, writeLines } from './compaction-helpers.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { SVC_MQTT_ENABLED: 'false' } });
});
afterAll(async () => {
  await s?.cleanup();
});

const SQL = 'SELECT count(*)::INT AS c, sum(n)::INT AS sn, sum(v)::DOUBLE AS sv FROM rc.cpu';
const waitIdle = async () => {
  let st: any = null;
  await waitFor(async () => (st = (await json(s, 'GET', '/api/v1/backup/status')).body).status !== 'running', 60_000, 'backup operation');
  expect(st.status).toBe('completed');
};

test('a restore over a live key that DuckDB has cached answers with the restored rows', async () => {
  await writeLines(s, 'rc', points('cpu', 2000));
  await flush(s);
  const started = await json(s, 'POST', '/api/v1/backup');
  expect(started.status).toBe(202);
  await waitIdle();

  // Damage the live file before any query reads it: same key and columns, the first 10 rows only.
  const [live] = manifestFiles(s.dir, 'rc');
  const path = join(s.dir, 'data', 'svc', live!.path);
  await queryFiles(s.dir, `COPY (SELECT * FROM read_parquet('${path}') ORDER BY n LIMIT 10) TO '${path}.damaged' (FORMAT parquet)`);
  renameSync(`${path}.damaged`, path);
  // Now the engine holds the damaged file's footer for this key.
  expect(await rows(s, 'rc', SQL)).toEqual([{ c: 10, sn: 45, sv: 22.5 }]);

  expect((await json(s, 'POST', '/api/v1/backup/restore', { backup_id: started.body.backup_id, confirm: true })).status).toBe(202);
  await waitIdle();
  // points(): n = 0..1999, v = n / 2.
  expect(await rows(s, 'rc', SQL)).toEqual([{ c: 2000, sn: 1_999_000, sv: 999_500 }]);
});

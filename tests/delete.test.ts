/** POST /api/v1/delete and GET /api/v1/delete/config, end to end with real files. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataFiles, waitFor } from './helpers/parquet.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { HOUR_MS, count, flush, ns, query, writeLines } from './helpers/lifecycle.ts';

const T0 = Date.UTC(2024, 0, 1); // hour 0 of the data
const del = (s: TestServer, body: unknown, token?: string) => json(s, 'POST', '/api/v1/delete', body, token);

describe('delete (disabled by default)', () => {
  let s: TestServer;
  beforeAll(async () => (s = await startServer()));
  afterAll(() => s.cleanup());

  test('403 with the spec message; config says so', async () => {
    const res = await del(s, { database: 'd', measurement: 'm', where: 'v > 1', confirm: true });
    expect(res.status).toBe(403);
    expect(res.body.error).toContain('set delete.enabled=true');
    expect((await json(s, 'GET', '/api/v1/delete/config')).body).toEqual({ enabled: false, max_rows_per_delete: 0, confirm_required: true });
  });
});

describe('delete (enabled)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ env: { SVC_DELETE_ENABLED: 'true', SVC_DELETE_MAX_ROWS_PER_DELETE: '40', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' } });
    const lines: string[] = [];
    // Hour 0: only host a. Hour 1: a and b. Hour 2: only b, plus one row without a host (NULL).
    for (let i = 0; i < 10; i++) lines.push(`cpu,host=a v=${i} ${ns(T0 + i * 1000)}`);
    for (let i = 0; i < 10; i++) lines.push(`cpu,host=a v=${i} ${ns(T0 + HOUR_MS + i * 1000)}`, `cpu,host=b v=${i} ${ns(T0 + HOUR_MS + i * 1000 + 1)}`);
    for (let i = 0; i < 10; i++) lines.push(`cpu,host=b v=${i} ${ns(T0 + 2 * HOUR_MS + i * 1000)}`);
    lines.push(`cpu v=99 ${ns(T0 + 2 * HOUR_MS + 30_000)}`);
    await writeLines(s, 'deldb', lines);
    await flush(s);
    // Still buffered when the delete comes: matching ones must go too.
    await writeLines(s, 'deldb', [`cpu,host=a v=7 ${ns(T0 + HOUR_MS + 50_000)}`]);
  });
  afterAll(() => s.cleanup());

  test('confirm, admin, a valid condition and the row limit are required', async () => {
    const base = { database: 'deldb', measurement: 'cpu', where: "host = 'a'" };
    const noConfirm = await del(s, base);
    expect(noConfirm.status).toBe(400);
    expect(noConfirm.body.error).toContain('confirm');
    expect((await del(s, { ...base, confirm: false })).status).toBe(400);
    expect((await del(s, { database: 'deldb', measurement: 'cpu', confirm: true })).body.error).toContain('where');
    const writer = await json(s, 'POST', '/api/v1/auth/tokens', { name: 'writer' });
    expect((await del(s, { ...base, confirm: true }, writer.body.token)).status).toBe(403);
    // A token granted `delete` explicitly (the memory service's purge token) may delete; the row limit still holds.
    const deleter = await json(s, 'POST', '/api/v1/auth/tokens', { name: 'deleter', permissions: ['read', 'delete'] });
    expect(deleter.status).toBe(201);
    expect((await del(s, { ...base, where: 'v >= 0', confirm: true }, deleter.body.token)).body.error).toContain('delete.max_rows_per_delete');
    // max_rows_per_delete = 40: all 42 rows match, so nothing is deleted.
    const tooMany = await del(s, { ...base, where: 'v >= 0', confirm: true });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toContain('delete.max_rows_per_delete');
    expect(await count(s, 'SELECT count(*) AS n FROM deldb.cpu')).toBe(42);
  });

  test('conditions that are not a plain row condition are refused with 400', async () => {
    const bad = [
      "1=1) UNION SELECT * FROM deldb.cpu WHERE (1=1",
      'v > (SELECT 1)',
      "host IN (SELECT host FROM deldb.cpu)",
      "1=1); DROP TABLE x; SELECT (1",
      "1=1); CREATE TABLE x (a INT); SELECT (1",
      "1=1); COPY x TO '/tmp/x'; SELECT (1",
      "1=1); ATTACH '/tmp/x.db'; SELECT (1",
      "1=1); LOAD httpfs; SELECT (1",
      "1=1); PRAGMA version; SELECT (1",
      "1=1); CALL pragma_version(); SELECT (1",
      "1=1); SET threads = 1; SELECT (1",
      "read_text('/etc/passwd') IS NOT NULL",
      "getenv('HOME') = 'x'",
      "current_setting('threads') = 1",
      'v > $1',
      'cpu.v > 1',
      '',
    ];
    for (const where of bad) {
      const res = await del(s, { database: 'deldb', measurement: 'cpu', where, confirm: true });
      expect({ where, status: res.status }).toEqual({ where, status: 400 });
    }
    expect(await count(s, 'SELECT count(*) AS n FROM deldb.cpu')).toBe(42);
  });

  test('deletes matching rows across hour files and buffers; NULL rows stay; others untouched', async () => {
    const before = await count(s, "SELECT count(*) AS n FROM deldb.cpu WHERE host = 'a'");
    expect(before).toBe(21);
    const res = await del(s, { database: 'deldb', measurement: 'cpu', where: "host = 'a' AND time < '2024-01-01 03:00:00'", confirm: true });
    expect(res.status).toBe(200);
    // Hour 0 and the flushed buffer (only host a) are removed; hour 1's first file is rewritten; hour 2 is not touched.
    expect(res.body).toMatchObject({ deleted_rows: 21, deleted_files: 2, rewritten_files: 1, failed_files: [] });
    expect(await count(s, "SELECT count(*) AS n FROM deldb.cpu WHERE host = 'a'")).toBe(0);
    expect(await count(s, "SELECT count(*) AS n FROM deldb.cpu WHERE host = 'b'")).toBe(20);
    expect(await count(s, 'SELECT count(*) AS n FROM deldb.cpu WHERE host IS NULL')).toBe(1);
    // The rewritten file keeps time order and its tag metadata (host is still a tag).
    const hour1 = await query(s, `SELECT host, v FROM deldb.cpu WHERE time >= '2024-01-01 01:00:00' AND time < '2024-01-01 02:00:00' ORDER BY time`);
    expect(hour1.map((r) => [r.host, r.v])).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((v) => ['b', v]));
    // A second identical delete finds nothing.
    const again = await del(s, { database: 'deldb', measurement: 'cpu', where: "host = 'a'", confirm: true });
    expect(again.body).toMatchObject({ deleted_rows: 0, deleted_files: 0, rewritten_files: 0 });
  });

  test('a condition on a column some files lack matches nothing there; a measurement with no files deletes nothing', async () => {
    await writeLines(s, 'deldb', [`mem,host=a,zone=z1 v=1 ${ns(T0)}`, `mem,host=a v=2 ${ns(T0 + 2 * HOUR_MS)}`]);
    await flush(s);
    const res = await del(s, { database: 'deldb', measurement: 'mem', where: "zone = 'z1'", confirm: true });
    expect(res.body).toMatchObject({ deleted_rows: 1, deleted_files: 1 });
    expect(await count(s, 'SELECT count(*) AS n FROM deldb.mem')).toBe(1);
    expect((await del(s, { database: 'deldb', measurement: 'nothing', where: 'v > 0', confirm: true })).body.deleted_rows).toBe(0);
  });

  test('a file that cannot be processed is reported with 207 and left as it is', async () => {
    const files = dataFiles(s.dir).filter((f) => f.startsWith('deldb/cpu/2024/01/01/02/'));
    expect(files.length).toBe(1);
    const other = dataFiles(s.dir).find((f) => f.startsWith('deldb/cpu/2024/01/01/01/'))!;
    writeFileSync(join(s.dir, 'data', 'svc', files[0]!), 'not a parquet file');
    const res = await del(s, { database: 'deldb', measurement: 'cpu', where: "host = 'b'", confirm: true });
    expect(res.status).toBe(207);
    expect(res.body.failed_files).toEqual([files[0]]);
    expect(typeof res.body.errors[files[0]!]).toBe('string');
    expect(res.body).toMatchObject({ deleted_rows: 10, deleted_files: 1, rewritten_files: 0 });
    // Errors name the file by its key, never by a path on the server.
    expect(res.body.errors[files[0]!]).not.toContain(s.dir);
    expect(dataFiles(s.dir)).toContain(files[0]!);
    // The emptied file is deleted by the reaper in the background.
    await waitFor(() => !dataFiles(s.dir).includes(other), 5000, 'emptied file deleted');
  });
});

/**
 * A delete must stay deleted across a crash when the WAL is on. One write can carry several
 * measurements; its WAL entry is released only when all of them are in files. A delete flushes the
 * measurement it deletes from; if another measurement of the same write stayed buffered, the entry
 * stayed in the WAL, and a crash then replayed the deleted rows.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { count, ns, writeLines } from './helpers/lifecycle.ts';
import { json, startServer } from './helpers/server.ts';

const T0 = Date.UTC(2024, 0, 1);
const env = { SVC_WAL_ENABLED: 'true', SVC_DELETE_ENABLED: 'true', SVC_INGEST_MAX_BUFFER_AGE_MS: '600000', SVC_INGEST_MAX_BUFFER_SIZE: '10000000' };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('delete then crash (WAL on)', () => {
  test('deleted rows do not come back when another measurement of the same write was still buffered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-delete-crash-'));
    dirs.push(dir);
    const a = await startServer({ dir, keepDir: true, env });
    const lines: string[] = [];
    for (let i = 0; i < 10; i++) lines.push(`cpu,host=a v=${i} ${ns(T0 + i * 1000)}`, `mem,host=a v=${i} ${ns(T0 + i * 1000)}`);
    await writeLines(a, 'crashdel', lines); // one request, one WAL entry, two measurements
    const res = await json(a, 'POST', '/api/v1/delete', { database: 'crashdel', measurement: 'cpu', where: 'v >= 5', confirm: true });
    expect(res.status).toBe(200);
    expect(res.body.deleted_rows).toBe(5);
    expect(await count(a, 'SELECT count(*) AS n FROM crashdel.cpu')).toBe(5);
    await Bun.sleep(300); // the release record (if any) reaches the WAL file
    await a.kill();
    const b = await startServer({ dir, keepDir: true, env });
    try {
      expect(await count(b, 'SELECT count(*) AS n FROM crashdel.cpu')).toBe(5);
      expect(await count(b, 'SELECT count(*) AS n FROM crashdel.mem')).toBe(10);
    } finally {
      await b.stop();
    }
  }, 60_000);
});

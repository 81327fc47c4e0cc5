import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '../../duckdb/index.ts';
import { mergeFiles } from './partition-merge.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-merge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
/** Writes a Parquet file from VALUES rows (time as seconds offset), with optional tags metadata. */
async function parquet(name: string, cols: string, values: string, tags: string[] | null): Promise<string> {
  const path = join(dir, name);
  const kv = tags ? `, KV_METADATA {tags: '${JSON.stringify(tags)}'}` : '';
  await conn.run(`COPY (SELECT to_timestamp(t)::TIMESTAMP AS time, * EXCLUDE (t) FROM (VALUES ${values}) v(${cols})) TO '${path}' (FORMAT parquet${kv})`);
  return path;
}
const read = async (path: string, order = 'host') => (await conn.runAndReadAll(`SELECT * EXCLUDE (time), epoch(time)::INT AS t FROM '${path}' ORDER BY t, ${order}`)).getRowObjectsJS();

describe('mergeFiles', () => {
  test('last write wins by seq, then by position; columns unioned by name; sorted by time', async () => {
    const f1 = await parquet('a.parquet', 't, host, v', `(10, 'a', 1.0), (10, 'b', 1.0), (10, 'a', 1.5)`, ['host']);
    const f2 = await parquet('b.parquet', 't, host, v, extra', `(5, 'a', 2.0, 7), (10, 'a', 2.0, 8)`, ['host']);
    const f3 = await parquet('c.parquet', 't, host, v', `(10, 'a', 3.0)`, ['host']);
    // f3 is the oldest write (seq 1) even though it is listed last: seq decides, not list order.
    const out = join(dir, 'out1.parquet');
    const r = await mergeFiles(conn, [{ path: f1, seq: 2 }, { path: f2, seq: 3 }, { path: f3, seq: 1 }], out);
    expect('written' in r && r.written.rows).toBe(3);
    expect(await read(out)).toEqual([
      { host: 'a', v: 2, extra: 7, t: 5 },
      { host: 'a', v: 2, extra: 8, t: 10 },
      { host: 'b', v: 1, extra: null, t: 10 },
    ]);
    const meta = (await conn.runAndReadAll(`SELECT DISTINCT compression FROM parquet_metadata('${out}')`)).getRows();
    expect(meta).toEqual([['ZSTD']]);
  });

  test('a file without tag metadata makes every string column part of the key', async () => {
    const f1 = await parquet('d.parquet', 't, host, region, v', `(1, 'a', 'x', 1.0), (1, 'a', 'y', 1.0)`, null);
    const f2 = await parquet('e.parquet', 't, host, region, v', `(1, 'a', 'x', 2.0)`, ['host']);
    const out = join(dir, 'out2.parquet');
    await mergeFiles(conn, [{ path: f1, seq: 1 }, { path: f2, seq: 2 }], out);
    expect(await read(out, 'host, region')).toEqual([
      { host: 'a', region: 'x', v: 2, t: 1 },
      { host: 'a', region: 'y', v: 1, t: 1 },
    ]);
  });

  test('a file without a time column leaves the inputs untouched', async () => {
    const f1 = await parquet('f.parquet', 't, host, v', `(1, 'a', 1.0)`, ['host']);
    const f2 = join(dir, 'g.parquet');
    await conn.run(`COPY (SELECT 'a' AS host, 1.0 AS v) TO '${f2}' (FORMAT parquet)`);
    const r = await mergeFiles(conn, [{ path: f1, seq: 1 }, { path: f2, seq: 2 }], join(dir, 'out3.parquet'));
    expect(r).toEqual({ skipped: expect.stringContaining('no time column') });
  });
});

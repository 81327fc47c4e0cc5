/** Compaction end to end: many small files to one, identical query results, last-write-wins, candidates, auth. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { T0_MS, dataFiles, flush, manifestFiles, points, queryFiles, rows, rowsOnDisk, waitFor, waitForJobs, writeLines } from './compaction-helpers.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startServer({
    env: { SVC_INGEST_MAX_BUFFER_AGE_MS: '600000', SVC_COMPACTION_HOURLY_MIN_FILES: '3', SVC_COMPACTION_MAX_FILES_PER_BATCH: '4', SVC_COMPACTION_DAILY_MIN_FILES: '2' },
  });
});
afterAll(async () => s?.cleanup());

describe('compaction', () => {
  test('10 small flushes of one hour become one ZSTD file; rows and query results are identical', async () => {
    for (let k = 0; k < 10; k++) {
      await writeLines(s, 'c1', points('cpu', 200, { offsetMs: k * 1000 }));
      await flush(s);
    }
    expect(manifestFiles(s.dir, 'c1').length).toBe(10);
    const sql = 'SELECT host, time, v, n FROM c1.cpu ORDER BY time, host, n';
    const before = await rows(s, 'c1', sql);
    expect(before.length).toBe(2000);

    const cand = await json(s, 'GET', '/api/v1/compaction/candidates?database=c1');
    expect(cand.status).toBe(200);
    expect(cand.body.total_candidates).toBe(1);
    expect(cand.body.candidates[0]).toMatchObject({ partition: 'c1/cpu/2023/11/14/22', file_count: 10, eligible: true });
    expect(cand.body.candidates[0].age_hours).toBeGreaterThan(24);

    const trig = await json(s, 'POST', '/api/v1/compaction/trigger', { database: 'c1' });
    expect(trig.status).toBe(200);
    expect(trig.body.job_id).toBeString();
    expect(trig.body.message).toBeString();
    const job = await waitForJobs(s, 1);
    expect(job).toMatchObject({ job_id: trig.body.job_id, status: 'completed', files_in: 10, files_out: 1, rows_in: 2000, rows_out: 2000 });

    const files = manifestFiles(s.dir, 'c1');
    expect(files.length).toBe(1);
    // The reaper deletes the inputs once no query holds them, which may finish just after the job does.
    await waitFor(() => dataFiles(s.dir).filter((f) => f.startsWith('c1/')).length === 1, 10_000, 'the compacted inputs to be deleted');
    expect(dataFiles(s.dir).filter((f) => f.startsWith('c1/'))).toEqual([files[0]!.path]);
    expect(await rowsOnDisk(s.dir, 'c1')).toBe(2000);
    expect(await rows(s, 'c1', sql)).toEqual(before);
    // ZSTD, sorted by time, tags kept in the key/value metadata.
    const meta = await queryFiles(s.dir, `SELECT DISTINCT compression FROM parquet_metadata('${s.dir}/data/svc/${files[0]!.path}')`);
    expect(meta.map((r) => r.compression)).toEqual(['ZSTD']);
    const unsorted = await queryFiles(s.dir, `SELECT count(*) AS c FROM (SELECT time < lag(time) OVER () AS back FROM $files(c1/**/*.parquet)) WHERE back`);
    expect(Number(unsorted[0]!.c)).toBe(0);
    const kv = await queryFiles(s.dir, `SELECT decode(value) AS v FROM parquet_kv_metadata('${s.dir}/data/svc/${files[0]!.path}') WHERE decode(key) = 'tags'`);
    expect(JSON.parse(String(kv[0]!.v))).toEqual(['host']);

    const status = await json(s, 'GET', '/api/v1/compaction/status');
    expect(status.body).toMatchObject({ enabled: true, running: false });
    expect(status.body.stats.total_jobs).toBeGreaterThanOrEqual(1);
    expect(status.body.stats.total_files_compacted).toBeGreaterThanOrEqual(10);
  });

  test('last write wins: the same point written three times across flushes keeps the third value', async () => {
    for (const v of [1, 2, 3]) {
      await writeLines(s, 'c2', [`m,host=a v=${v} ${T0_MS}`, `m,host=b v=${v * 10} ${T0_MS}`]);
      await flush(s);
    }
    // Within one flush the later line wins too.
    await writeLines(s, 'c2', [`m,host=c v=1 ${T0_MS}`, `m,host=c v=2 ${T0_MS}`]);
    await flush(s);
    expect(manifestFiles(s.dir, 'c2').length).toBe(4);
    await json(s, 'POST', '/api/v1/compaction/hourly', { database: 'c2', measurement: 'm' });
    const job = await waitForJobs(s, 2);
    expect(job).toMatchObject({ status: 'completed', files_in: 4, files_out: 1, rows_in: 8, rows_out: 3 });
    expect(await rows(s, 'c2', 'SELECT host, v FROM c2.m ORDER BY host')).toEqual([
      { host: 'a', v: 3 },
      { host: 'b', v: 30 },
      { host: 'c', v: 2 },
    ]);
  });

  test('below hourly_min_files a partition is not eligible; the daily tier keeps one file per hour', async () => {
    // Two files in hour 22 and two in hour 23: not eligible hourly (min 3), eligible daily (min 2 per day).
    for (const offsetMs of [0, 1000, 3_600_000, 3_601_000]) {
      await writeLines(s, 'c3', points('disk', 50, { offsetMs }));
      await flush(s);
    }
    const cand = await json(s, 'GET', '/api/v1/compaction/candidates?database=c3');
    expect(cand.body.candidates.map((c: any) => [c.partition, c.file_count, c.eligible, c.tier])).toEqual([
      ['c3/disk/2023/11/14/22', 2, true, 'daily'],
      ['c3/disk/2023/11/14/23', 2, true, 'daily'],
    ]);
    await json(s, 'POST', '/api/v1/compaction/hourly', { database: 'c3' });
    const hourly = await waitForJobs(s, 3);
    expect(hourly).toMatchObject({ tier: 'hourly', partitions: 0, files_in: 0 });
    await json(s, 'POST', '/api/v1/compaction/daily', { database: 'c3' });
    const daily = await waitForJobs(s, 4);
    expect(daily).toMatchObject({ tier: 'daily', partitions: 2, files_in: 4, files_out: 2 });
    expect(manifestFiles(s.dir, 'c3').map((f) => f.path.split('/').slice(0, 6).join('/'))).toEqual(['c3/disk/2023/11/14/22', 'c3/disk/2023/11/14/23']);
    expect(await rowsOnDisk(s.dir, 'c3')).toBe(200);
  });

  test('a partition with more files than max_files_per_batch still ends as one file', async () => {
    for (let k = 0; k < 9; k++) {
      await writeLines(s, 'c4', [`m,host=a v=${k} ${T0_MS}`, `m,host=a v=${k} ${T0_MS + 1 + k}`]);
      await flush(s);
    }
    await json(s, 'POST', '/api/v1/compaction/trigger', { database: 'c4' });
    const job = await waitForJobs(s, 5);
    expect(job).toMatchObject({ status: 'completed', files_in: 9, files_out: 1, rows_out: 10 });
    expect(manifestFiles(s.dir, 'c4').length).toBe(1);
    expect(await rows(s, 'c4', `SELECT v FROM c4.m WHERE time = epoch_ms(${T0_MS})`)).toEqual([{ v: 8 }]);
  });

  test('mutating routes need admin; reads need a token', async () => {
    const created = await json(s, 'POST', '/api/v1/auth/tokens', { name: 'reader', permissions: ['read'] });
    const token = created.body.token as string;
    expect((await json(s, 'POST', '/api/v1/compaction/trigger', {}, token)).status).toBe(403);
    expect((await json(s, 'POST', '/api/v1/compaction/hourly', {}, token)).status).toBe(403);
    expect((await json(s, 'GET', '/api/v1/compaction/status', undefined, token)).status).toBe(200);
    expect((await json(s, 'GET', '/api/v1/compaction/status', undefined, null)).status).toBe(401);
    const m = await (await s.fetch('/metrics')).text();
    expect(m).toMatch(/svc_compaction_jobs_total \d+/);
    expect(m).toMatch(/svc_compaction_jobs_success_total [1-9]/);
  });
});

/** Retention policies end to end: routes, an exact run with a straddling file, scheduling, restart. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { dataFiles, waitFor } from './helpers/parquet.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';
import { HOUR_MS, acrossFires, count, flush, ns, writeLines } from './helpers/lifecycle.ts';

const DAY_MS = 86_400_000;

describe('retention', () => {
  let s: TestServer;
  let dir = '';
  const now = Date.now();
  // Rows every second over three hours around the expected cutoff (now - 3d - 1d), plus old and new days.
  const cutoffEstimate = now - 4 * DAY_MS;
  const gridStart = Math.floor(cutoffEstimate / HOUR_MS) * HOUR_MS - HOUR_MS;
  const times: number[] = [];
  for (let t = gridStart + 1000; t < gridStart + 3 * HOUR_MS; t += 1000) times.push(t);
  for (const d of [10, 9, 2, 1]) times.push(now - d * DAY_MS);

  beforeAll(async () => {
    s = await startServer({ keepDir: true });
    dir = s.dir;
    await writeLines(s, 'retdb', times.map((t, i) => `cpu,host=h${i % 3} v=${i} ${ns(t)}`));
    await writeLines(s, 'retdb', [`mem v=1 ${ns(now - 10 * DAY_MS)}`, `mem v=2 ${ns(now)}`]);
    await flush(s);
  });
  afterAll(async () => {
    await s.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  test('create: required fields, bad duration or cron name the field, 409 on a taken name, admin only', async () => {
    const bad: [unknown, string][] = [
      [{ database: 'retdb', duration: '3d' }, 'name'],
      [{ name: 'x', duration: '3d' }, 'database'],
      [{ name: 'x', database: 'retdb' }, 'duration'],
      [{ name: 'x', database: 'retdb', duration: '3 weeks' }, 'duration'],
      [{ name: 'x', database: 'retdb', duration: '3d', retention_days: 4 }, 'duration'],
      [{ name: 'x', database: 'retdb', duration: '3d', schedule: '61 * * * *' }, 'schedule'],
      [{ name: 'x', database: 'retdb', duration: '3d', schedule: 'every day' }, 'schedule'],
      [{ name: 'x', database: 'bad name', duration: '3d' }, 'database'],
      [{ name: 'x', database: 'retdb', duration: '3d', bogus: 1 }, 'bogus'],
    ];
    for (const [body, field] of bad) {
      const res = await json(s, 'POST', '/api/v1/retention', body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.error).toContain(field);
    }
    const writer = await json(s, 'POST', '/api/v1/auth/tokens', { name: 'writer' });
    expect((await json(s, 'POST', '/api/v1/retention', { name: 'w', database: 'retdb', duration: '3d' }, writer.body.token)).status).toBe(403);
    expect((await json(s, 'GET', '/api/v1/retention', undefined, writer.body.token)).status).toBe(200);
    expect((await json(s, 'GET', '/api/v1/retention', undefined, null)).status).toBe(401);
  });

  test('CRUD round trip', async () => {
    const created = await json(s, 'POST', '/api/v1/retention', { name: 'cpu-3d', database: 'retdb', measurement: 'cpu', duration: '3d', buffer_days: 1 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'cpu-3d', database: 'retdb', measurement: 'cpu', duration: '3d', retention_days: 3, buffer_days: 1, schedule: null, enabled: true });
    const id = created.body.id;
    expect(typeof id).toBe('number');
    expect((await json(s, 'POST', '/api/v1/retention', { name: 'cpu-3d', database: 'retdb', retention_days: 3 })).status).toBe(409);
    expect((await json(s, 'GET', `/api/v1/retention/${id}`)).body).toEqual(created.body);
    const list = await json(s, 'GET', '/api/v1/retention');
    expect(list.body.count).toBe(1);
    const upd = await json(s, 'PUT', `/api/v1/retention/${id}`, { schedule: '0 4 * * *' });
    expect(upd.body).toMatchObject({ id, schedule: '0 4 * * *', retention_days: 3 });
    expect((await json(s, 'GET', '/api/v1/retention/999')).status).toBe(404);
    expect((await json(s, 'GET', '/api/v1/retention/abc')).status).toBe(404);
    expect((await json(s, 'PUT', `/api/v1/retention/${id}`, { retention_days: 0 })).status).toBe(400);
  });

  test('execute removes exactly the rows older than the cutoff, rewriting the straddling file', async () => {
    const id = (await json(s, 'GET', '/api/v1/retention')).body.policies[0].id;
    const total = await count(s, 'SELECT count(*) AS n FROM retdb.cpu');
    expect(total).toBe(times.length);
    const filesBefore = dataFiles(s.dir).filter((f) => f.startsWith('retdb/cpu/')).length;
    const run = await json(s, 'POST', `/api/v1/retention/${id}/execute`);
    expect(run.status).toBe(200);
    const cutoff = Date.parse(run.body.cutoff);
    expect(Math.abs(cutoff - (Date.now() - 4 * DAY_MS))).toBeLessThan(60_000);
    const expected = times.filter((t) => t < cutoff).length;
    expect(run.body).toMatchObject({ status: 'success', trigger: 'manual', rows_deleted: expected, measurements: ['cpu'], failed_files: [], error: null });
    expect(run.body.duration_ms).toBeGreaterThanOrEqual(0);
    // Cutoff inside the grid's middle hour: that file is rewritten (unless it fell on the hour's first or last second).
    const offset = cutoff % HOUR_MS;
    if (offset > 2000 && offset < HOUR_MS - 2000) expect(run.body.files_rewritten).toBe(1);
    expect(run.body.files_deleted).toBeGreaterThanOrEqual(2);
    expect(await count(s, 'SELECT count(*) AS n FROM retdb.cpu')).toBe(total - expected);
    expect(await count(s, `SELECT count(*) AS n FROM retdb.cpu WHERE time < make_timestamp(${cutoff * 1000})`)).toBe(0);
    // Other measurements are not touched by a policy of one measurement.
    expect(await count(s, 'SELECT count(*) AS n FROM retdb.mem')).toBe(2);
    await waitFor(() => dataFiles(s.dir).filter((f) => f.startsWith('retdb/cpu/')).length === filesBefore - run.body.files_deleted, 5000, 'old files deleted');
    const history = await json(s, 'GET', `/api/v1/retention/${id}/executions`);
    expect(history.body.count).toBe(1);
    expect(history.body.executions[0]).toEqual(run.body);
  });

  test('a policy without measurement covers every measurement; a seconds schedule fires on its own', async () => {
    const created = await json(s, 'POST', '/api/v1/retention', { name: 'all-5d', database: 'retdb', retention_days: 5, schedule: '* * * * * *' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    await waitFor(async () => (await json(s, 'GET', `/api/v1/retention/${id}/executions`)).body.count > 0, 5000, 'scheduled run');
    const exec = (await json(s, 'GET', `/api/v1/retention/${id}/executions`)).body.executions.at(-1);
    expect(exec).toMatchObject({ trigger: 'schedule', status: 'success' });
    expect(exec.measurements.sort()).toEqual(['cpu', 'mem']);
    await waitFor(async () => (await count(s, 'SELECT count(*) AS n FROM retdb.mem')) === 1, 5000, 'old mem row removed');
    // Disabled: no more runs.
    await json(s, 'PUT', `/api/v1/retention/${id}`, { enabled: false });
    // A witness on the same schedule (keeping ten years: it deletes nothing) proves the scheduler had its chances.
    const witness = await json(s, 'POST', '/api/v1/retention', { name: 'witness', database: 'retdb', retention_days: 3650, schedule: '* * * * * *' });
    const executions = async (policy: string) => (await json(s, 'GET', `/api/v1/retention/${policy}/executions`)).body.count as number;
    const { before, after } = await acrossFires(() => executions(witness.body.id), 2, () => executions(id));
    expect(after).toBe(before);
    expect((await json(s, 'DELETE', `/api/v1/retention/${witness.body.id}`)).status).toBe(200);
  }, 60_000);

  test('definitions and history survive a restart; delete removes a policy', async () => {
    const before = (await json(s, 'GET', '/api/v1/retention')).body;
    expect(await s.stop()).toBe(0);
    s = await startServer({ dir, keepDir: true });
    const after = (await json(s, 'GET', '/api/v1/retention')).body;
    expect(after).toEqual(before);
    const id = before.policies[0].id;
    expect((await json(s, 'GET', `/api/v1/retention/${id}/executions`)).body.count).toBe(1);
    const del = await json(s, 'DELETE', `/api/v1/retention/${id}`);
    expect(del.body).toEqual({ message: `retention policy ${id} deleted`, id });
    expect((await json(s, 'GET', `/api/v1/retention/${id}`)).status).toBe(404);
    expect((await json(s, 'DELETE', `/api/v1/retention/${id}`)).status).toBe(404);
  });
});

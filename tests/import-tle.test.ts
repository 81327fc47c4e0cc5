/** Satellite element sets: POST /api/v1/write/tle (streaming, partial success) and /api/v1/import/tle (all or nothing). */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { tleChecksum } from '../src/ingest/index.ts';
import { dataFiles } from './helpers/parquet.ts';
import { json, startServer, type TestServer } from './helpers/server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response shapes are asserted by the tests
const jsonOf = (r: Response): Promise<any> => r.json();
let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.cleanup());

const ISS = [
  'ISS (ZARYA)',
  '1 25544U 98067A   08264.51782528 -.00002182  00000-0 -11606-4 0  2927',
  '2 25544  51.6416 247.4627 0006703 130.5360 325.0288 15.72125391563537',
];
const withChecksum = (line: string) => line.slice(0, 68) + String(tleChecksum(line));
/** A synthetic set for satellite `sat` at day-of-2024 `day` (checksums computed). */
const set = (sat: number, day: number, name?: string) => {
  const no = String(sat).padStart(5, '0');
  const l1 = withChecksum(`1 ${no}U 24001A   24${day.toFixed(8).padStart(12, '0')}  .00001000  00000-0  12345-4 0  9990`);
  const l2 = withChecksum(`2 ${no}  97.5000 120.0000 0001000  90.0000 270.0000 15.00000000123450`);
  return [...(name ? [name] : []), l1, l2].join('\n');
};
const sql = async (q: string) => (await json(s, 'POST', '/api/v1/query', { sql: q })).body as { data: unknown[][] };

describe('TLE', () => {
  test('write/tle: 2-line and 3-line sets in one body are written and queryable', async () => {
    const body = [ISS.join('\n'), set(40001, 100.5), set(40002, 100.75, '0 SAT B')].join('\n') + '\n';
    const res = await s.fetch('/api/v1/write/tle', { method: 'POST', headers: { 'x-svc-database': 'orbits' }, body });
    expect(res.status).toBe(204);
    await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' });
    const q = await sql(
      `SELECT satellite_number, name, classification, international_designator, time, mean_motion, mean_motion_dot, mean_motion_ddot, bstar,
              inclination, raan, eccentricity, arg_of_perigee, mean_anomaly, revolution_number, element_set_number
       FROM orbits.tle ORDER BY satellite_number`,
    );
    expect(q.data).toEqual([
      ['25544', 'ISS (ZARYA)', 'U', '98067A', '2008-09-20T12:25:40.104192Z', 15.72125391, -0.00002182, 0, -0.000011606, 51.6416, 247.4627, 0.0006703, 130.536, 325.0288, 56353, 292],
      ['40001', null, 'U', '24001A', '2024-04-09T12:00:00Z', 15, 0.00001, 0, 0.000012345, 97.5, 120, 0.0001, 90, 270, 12345, 999],
      ['40002', 'SAT B', 'U', '24001A', '2024-04-09T18:00:00Z', 15, 0.00001, 0, 0.000012345, 97.5, 120, 0.0001, 90, 270, 12345, 999],
    ]);
  });

  test('write/tle: a bad checksum rejects that set only (partial success, line reported)', async () => {
    const bad = set(40004, 101).replace(/\d$/, (d) => String((Number(d) + 1) % 10));
    const res = await s.fetch('/api/v1/write/tle?measurement=tle_partial&db=orbits', { method: 'POST', body: [set(40003, 101), bad].join('\n') });
    const r = await jsonOf(res);
    expect(res.status).toBe(400);
    expect(r.error).toMatch(/^partial write: 1 element sets written, 1 rejected; first bad set at line 4: checksum mismatch on element line 2/);
    expect(r.errors).toEqual([{ line: 4, satellite: '40004', message: expect.stringContaining('checksum mismatch') }]);
    expect((await sql(`SELECT satellite_number FROM orbits.tle_partial`)).data).toEqual([['40003']]);
  });

  test('import/tle: a backfill of 3000 sets across 6 hours, multipart', async () => {
    const sets = Array.from({ length: 3000 }, (_, i) => set(50000 + (i % 100), 150 + (i % 6) / 24 + (i % 60) / 1440, `SAT-${i % 100}`));
    const form = new FormData();
    form.append('file', new Blob([sets.join('\n')]), 'history.tle');
    const res = await s.fetch('/api/v1/import/tle?db=orbits&measurement=history', { method: 'POST', body: form });
    const r = await jsonOf(res);
    expect(res.status).toBe(200);
    expect(r.result).toMatchObject({ database: 'orbits', measurement: 'history', rows_imported: 3000, partitions_created: 6, time_range_min: '2024-05-29T00:00:00Z' });
    expect(r.result.columns).toContain('bstar');
    expect((await sql(`SELECT count(DISTINCT satellite_number), count(*) FROM orbits.history`)).data[0]).toEqual([100, 3000]);
  });

  test('import/tle: one bad checksum fails the whole backfill, every bad set listed with its line', async () => {
    const bad = set(60001, 120).replace(/\d$/, (d) => String((Number(d) + 1) % 10));
    const res = await s.fetch('/api/v1/import/tle?db=orbits&measurement=backfill_bad', { method: 'POST', body: [set(60000, 120), bad, set(60002, 120)].join('\n') });
    const r = await jsonOf(res);
    expect(res.status).toBe(400);
    expect(r.error).toMatch(/^cannot import TLE: 1 bad element set, nothing imported; first at line 4: checksum mismatch/);
    expect(r.errors).toHaveLength(1);
    expect(dataFiles(s.dir).filter((f) => f.startsWith('orbits/backfill_bad/'))).toEqual([]);
    expect((await sql(`SELECT count(*) FROM orbits.backfill_bad`)).data).toEqual([[0]]);
  });
});

import { expect, test } from 'bun:test';
import { HIDDEN_ERROR, UNRESTRICTED, type TableAccess } from '../lib/table-access.ts';
import type { TieringJob } from './tiering-store.ts';
import { jobView, moveError, readableJobError, readableTotals } from './tiering-visibility.ts';

/** Reads db1.cpu only. */
const cpuOnly: TableAccess = { allows: (_a, d, m) => d === 'db1' && m === 'cpu', allowsDatabase: (_a, d) => d === 'db1', ownsSystemDatabase: () => false };
const cpuFile = 'db1/cpu/2023/11/14/22/cpu_20231114_220000_1.parquet';
const diskFile = 'db1/disk/2023/11/14/22/disk_20231114_220000_1.parquet';

test('a move error is shown only to a caller that may read its file; any other error only to unrestricted access', () => {
  const readable = moveError(cpuFile, `cannot verify the cold copy of ${cpuFile}: it is missing`);
  expect(readableJobError(cpuOnly, readable)).toBe(readable);
  expect(readableJobError(cpuOnly, moveError(diskFile, 'cold tier down'))).toBe(HIDDEN_ERROR);
  expect(readableJobError(cpuOnly, `cannot delete ${diskFile}`)).toBe(HIDDEN_ERROR);
  expect(readableJobError(cpuOnly, null)).toBeNull();
  expect(readableJobError(UNRESTRICTED, moveError(diskFile, 'x'))).toBe(moveError(diskFile, 'x'));
  const job: TieringJob = { id: 'j', status: 'failed', trigger: 'manual', started_at: '', finished_at: '', files_moved: 1, bytes_moved: 2, failures: 1, error: moveError(diskFile, 'x') };
  expect(jobView(cpuOnly, job)).toEqual({ ...job, error: HIDDEN_ERROR });
  expect(jobView(cpuOnly, null)).toBeNull();
});

test('totals sum only readable measurements; a database with none of them is not named', () => {
  const rows = [
    { tier: 'hot' as const, database: 'db1', measurement: 'cpu', files: 2, bytes: 20 },
    { tier: 'cold' as const, database: 'db1', measurement: 'cpu', files: 1, bytes: 10 },
    { tier: 'hot' as const, database: 'db1', measurement: 'disk', files: 5, bytes: 50 },
    { tier: 'hot' as const, database: 'db2', measurement: 'cpu', files: 7, bytes: 70 },
  ];
  expect(readableTotals(rows, cpuOnly)).toEqual({
    hot: { files: 2, bytes: 20 },
    cold: { files: 1, bytes: 10 },
    by_database: { db1: { hot: { files: 2, bytes: 20 }, cold: { files: 1, bytes: 10 } } },
  });
  const all = readableTotals(rows, UNRESTRICTED);
  expect(all.hot).toEqual({ files: 14, bytes: 140 });
  expect(Object.keys(all.by_database)).toEqual(['db1', 'db2']);
});

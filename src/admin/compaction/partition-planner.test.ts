import { describe, expect, test } from 'bun:test';
import type { ManifestFile } from '../../catalog/index.ts';
import { batchSizes, candidates, dailyPartitions, hourlyEligible, partitionName, partitionsOf } from './partition-planner.ts';
import type { CompactionSettings } from './compaction-settings.ts';

const H = 3_600_000_000;
const HOUR = Date.UTC(2024, 0, 2, 5) * 1000;
const settings = { hourlyMinAgeHours: 1, hourlyMinFiles: 3, dailyMinFiles: 4 } as CompactionSettings;
const file = (hour: number, seq: number, m = 'cpu'): ManifestFile => ({
  path: `db/${m}/${hour}/${seq}.parquet`, database: 'db', measurement: m, hour, minTime: hour, maxTime: hour + 1, rows: 1, bytes: 1024 * 1024, columns: ['time'], seq, createdAt: '',
});

describe('partition planner', () => {
  test('names and groups partitions, files in seq order', () => {
    const parts = partitionsOf([file(HOUR, 3), file(HOUR, 1), file(HOUR + H, 2), file(HOUR, 4, 'mem')]);
    expect(parts.map(partitionName)).toEqual(['db/cpu/2024/01/02/05', 'db/cpu/2024/01/02/06', 'db/mem/2024/01/02/05']);
    expect(parts[0]!.files.map((f) => f.seq)).toEqual([1, 3]);
    expect(partitionsOf([file(HOUR, 1), file(HOUR, 2, 'mem')], { measurement: 'mem' }).length).toBe(1);
  });

  test('hourly eligibility needs age (from the hour start) and file count', () => {
    const [p] = partitionsOf([file(HOUR, 1), file(HOUR, 2), file(HOUR, 3)]);
    expect(hourlyEligible(p!, HOUR / 1000 + 3_599_000, settings)).toBe(false);
    expect(hourlyEligible(p!, HOUR / 1000 + 3_600_000, settings)).toBe(true);
    const [q] = partitionsOf([file(HOUR, 1), file(HOUR, 2)]);
    expect(hourlyEligible(q!, HOUR / 1000 + 10 * 3_600_000, settings)).toBe(false);
  });

  test('daily tier: a finished day with enough files, hours with two or more files, hour layout kept', () => {
    const day = Date.UTC(2024, 0, 2) * 1000;
    const files = [file(day, 1), file(day, 2), file(day + H, 3), file(day + H, 4), file(day + 2 * H, 5)];
    const parts = partitionsOf(files);
    const endOfDayMs = (day + 24 * H) / 1000;
    expect(dailyPartitions(parts, endOfDayMs - 1, settings)).toEqual([]);
    expect(dailyPartitions(parts, endOfDayMs, settings).map(partitionName)).toEqual(['db/cpu/2024/01/02/00', 'db/cpu/2024/01/02/01']);
    expect(dailyPartitions(partitionsOf(files.slice(0, 3)), endOfDayMs, settings)).toEqual([]);
    const view = candidates(parts, endOfDayMs, settings);
    expect(view.map((c) => [c.partition, c.file_count, c.total_size_mb, c.eligible, c.tier])).toEqual([
      ['db/cpu/2024/01/02/00', 2, 2, true, 'daily'],
      ['db/cpu/2024/01/02/01', 2, 2, true, 'daily'],
    ]);
  });

  test('batches: the first takes max files, later ones max-1 plus the previous output', () => {
    expect(batchSizes(1, 30)).toEqual([]);
    expect(batchSizes(2, 30)).toEqual([2]);
    expect(batchSizes(30, 30)).toEqual([30]);
    expect(batchSizes(31, 30)).toEqual([30, 1]);
    expect(batchSizes(60, 30)).toEqual([30, 29, 1]);
    expect(batchSizes(5, 2)).toEqual([2, 1, 1, 1]);
  });
});

/**
 * Which hour partitions to compact, and why (pure). A partition is `database/measurement/yyyy/mm/dd/hh`;
 * its age is counted from the start of its hour, so with `hourly_min_age_hours = 1` an hour becomes
 * eligible as soon as it is over. The daily tier keeps the hour-partition layout: a day with at least
 * `daily_min_files` files has each of its hours that still holds two or more files merged into one.
 */
import type { ManifestFile } from '../../catalog/index.ts';
import type { CompactionSettings } from './compaction-settings.ts';

const HOUR_US = 3_600_000_000;
const DAY_US = 24 * HOUR_US;

/** The files of one hour partition. */
export interface Partition {
  database: string;
  measurement: string;
  /** Start of the UTC hour, epoch µs. */
  hour: number;
  files: ManifestFile[];
}

/** A candidate as /candidates shows it. */
export interface CandidateView {
  partition: string;
  file_count: number;
  total_size_mb: number;
  age_hours: number;
  eligible: boolean;
  tier: 'hourly' | 'daily' | null;
}

/** Optional scope of a run or a listing. */
export interface PartitionFilter {
  database?: string;
  measurement?: string;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `database/measurement/yyyy/mm/dd/hh` of a partition. */
export function partitionName(p: { database: string; measurement: string; hour: number }): string {
  const d = new Date(p.hour / 1000);
  return `${p.database}/${p.measurement}/${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/${pad(d.getUTCHours())}`;
}

/** Groups files into hour partitions (files of one partition ordered by seq), optionally scoped. */
export function partitionsOf(files: readonly ManifestFile[], filter: PartitionFilter = {}): Partition[] {
  const byKey = new Map<string, Partition>();
  for (const f of files) {
    if (filter.database && f.database !== filter.database) continue;
    if (filter.measurement && f.measurement !== filter.measurement) continue;
    const key = `${f.database}\n${f.measurement}\n${f.hour}`;
    let p = byKey.get(key);
    if (!p) byKey.set(key, (p = { database: f.database, measurement: f.measurement, hour: f.hour, files: [] }));
    p.files.push(f);
  }
  const out = [...byKey.values()];
  for (const p of out) p.files.sort((a, b) => a.seq - b.seq || a.path.localeCompare(b.path));
  return out.sort((a, b) => a.database.localeCompare(b.database) || a.measurement.localeCompare(b.measurement) || a.hour - b.hour);
}

/** Hours since the partition's hour began. */
export function ageHours(p: Partition, nowMs: number): number {
  return (nowMs * 1000 - p.hour) / HOUR_US;
}

/** Hourly tier: old enough and at least `hourly_min_files` files. */
export function hourlyEligible(p: Partition, nowMs: number, s: CompactionSettings): boolean {
  return p.files.length >= Math.max(2, s.hourlyMinFiles) && ageHours(p, nowMs) >= s.hourlyMinAgeHours;
}

/**
 * Daily tier: partitions of days that are over (and whose last hour is old enough for the hourly tier)
 * holding at least `daily_min_files` files in all; of those, the hours with two or more files.
 */
export function dailyPartitions(parts: readonly Partition[], nowMs: number, s: CompactionSettings): Partition[] {
  const days = new Map<string, Partition[]>();
  for (const p of parts) {
    const key = `${p.database}\n${p.measurement}\n${Math.floor(p.hour / DAY_US)}`;
    const list = days.get(key);
    if (list) list.push(p);
    else days.set(key, [p]);
  }
  const out: Partition[] = [];
  const now = nowMs * 1000;
  for (const list of days.values()) {
    const dayStart = Math.floor(list[0]!.hour / DAY_US) * DAY_US;
    const over = now - (dayStart + DAY_US - HOUR_US) >= s.hourlyMinAgeHours * HOUR_US && now >= dayStart + DAY_US;
    const files = list.reduce((n, p) => n + p.files.length, 0);
    if (over && files >= Math.max(2, s.dailyMinFiles)) out.push(...list.filter((p) => p.files.length >= 2));
  }
  return out;
}

/** The candidate listing: every partition with two or more files, and whether a tier would take it now. */
export function candidates(parts: readonly Partition[], nowMs: number, s: CompactionSettings): CandidateView[] {
  const daily = new Set(dailyPartitions(parts, nowMs, s));
  return parts
    .filter((p) => p.files.length >= 2)
    .map((p) => {
      const tier = hourlyEligible(p, nowMs, s) ? 'hourly' : daily.has(p) ? 'daily' : null;
      return {
        partition: partitionName(p),
        file_count: p.files.length,
        total_size_mb: Math.round((p.files.reduce((n, f) => n + f.bytes, 0) / 1048576) * 1000) / 1000,
        age_hours: Math.round(ageHours(p, nowMs) * 100) / 100,
        eligible: tier !== null,
        tier,
      };
    });
}

/**
 * Splits a partition's files (seq order) into merge batches of at most `max` files. Each batch after the
 * first also takes the previous batch's output, so the partition ends as one file and every batch
 * covers a contiguous seq range (its output's seq, the batch's largest, then orders it exactly).
 */
export function batchSizes(fileCount: number, max: number): number[] {
  const sizes: number[] = [];
  let left = fileCount;
  let first = true;
  while (left > (first ? 1 : 0)) {
    const take = Math.min(left, first ? max : max - 1);
    sizes.push(take);
    left -= take;
    first = false;
  }
  return sizes;
}

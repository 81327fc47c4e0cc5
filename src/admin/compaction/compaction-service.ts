/**
 * Compaction jobs: the schedules, manual triggers, the partitions each job merges (at most
 * `max_concurrent` at once, each partition by one job at a time), and the records behind the routes.
 */
import type { CatalogDb, FileManifestStore } from '../../catalog/index.ts';
import { randomId } from '../../lib/crypto.ts';
import { messageOf } from '../../lib/errors.ts';
import { readableMeasurements, type TableAccess } from '../../lib/table-access.ts';
import type { Logger, SvcMetrics } from '../../observability/index.ts';
import type { FileReaper, ObjectStore } from '../../storage/index.ts';
import { startSchedules, type Schedules } from './compaction-schedule.ts';
import type { CompactionSettings } from './compaction-settings.ts';
import { CompactionStore, type JobRecord, type JobTotals } from './compaction-store.ts';
import { crashHook } from './crash-hook.ts';
import { jobVisible, readableErrors, readableErrorText } from './job-visibility.ts';
import { Limiter } from './limiter.ts';
import { withMergeEngine } from './merge-engine.ts';
import { compactPartition, type MergeDeps, type UnflushedCheck } from './partition-compactor.ts';
import { candidates, dailyPartitions, hourlyEligible, partitionName, partitionsOf, type CandidateView, type Partition, type PartitionFilter } from './partition-planner.ts';

/** Which partitions a job takes: the hourly tier, the daily tier, or both (manual trigger). */
export type Tier = 'hourly' | 'daily' | 'all';

/** A running job as /jobs shows it. */
export type ActiveJob = Omit<JobRecord, 'status' | 'finished_at' | 'error'> & { status: 'running'; partitions_done: number; errors: string[] };

/** Collaborators, built by main.ts. */
export interface CompactionDeps {
  settings: CompactionSettings;
  catalog: CatalogDb;
  manifest: FileManifestStore;
  store: ObjectStore;
  reaper: FileReaper;
  metrics: SvcMetrics;
  logger: Logger;
  unflushed: UnflushedCheck;
  /**
   * The per-measurement lock of the other file-rewriting jobs (delete, retention, CQ replace): held for
   * each partition merge so they never interleave. Without it the swap's own checks still refuse to
   * replace files another job replaced meanwhile (the merge is then retried on the next run).
   */
  locks?: { run<T>(keys: readonly { database: string; measurement: string }[], fn: () => Promise<T>): Promise<T> };
  /** False skips scheduled runs (a cluster node that is not the active compactor); triggers still run. */
  mayRunScheduled?: () => boolean;
}

/** Runs and reports compaction. */
export class CompactionService {
  readonly store: CompactionStore;
  private readonly active = new Map<string, ActiveJob>();
  private readonly busy = new Set<string>();
  private readonly limiter: Limiter;
  private readonly merge: MergeDeps;
  private readonly running = new Set<Promise<void>>();
  private schedules: Schedules | null = null;
  private stopping = false;

  constructor(private readonly deps: CompactionDeps) {
    this.store = new CompactionStore(deps.catalog);
    this.limiter = new Limiter(deps.settings.maxConcurrent);
    const { store, manifest, reaper, unflushed } = deps;
    this.merge = { store, manifest, reaper, unflushed, jobs: this.store, crash: crashHook(deps.settings.testCrashAt) };
  }

  /** Starts the hourly and daily schedules when `compaction.enabled`. */
  start(): void {
    const s = this.deps.settings;
    if (!s.enabled) return;
    this.schedules = startSchedules([
      { pattern: s.hourlySchedule, run: () => void (this.mayRunScheduled() && this.trigger('hourly')) },
      { pattern: s.dailySchedule, run: () => void (this.mayRunScheduled() && this.trigger('daily')) },
    ]);
  }

  private mayRunScheduled(): boolean {
    return this.deps.mayRunScheduled?.() ?? true;
  }

  /** Stops the schedules; running merges finish (bounded by the shutdown timeout), queued ones are dropped. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.schedules?.stop();
    await Promise.allSettled([...this.running]);
  }

  /** Starts a job in the background; returns its id at once. */
  trigger(tier: Tier, filter: PartitionFilter = {}): { message: string; job_id: string } {
    const job_id = `compaction-${Date.now()}-${randomId(4)}`;
    const job: ActiveJob = {
      job_id, tier, database: filter.database ?? null, measurement: filter.measurement ?? null, status: 'running',
      started_at: new Date().toISOString(), partitions: 0, partitions_done: 0, partitions_skipped: 0,
      files_in: 0, files_out: 0, bytes_in: 0, bytes_out: 0, rows_in: 0, rows_out: 0, errors: [],
    };
    this.active.set(job_id, job);
    this.deps.metrics.compactionJobs.inc();
    const run = this.runJob(job, filter).finally(() => this.running.delete(run));
    this.running.add(run);
    return { message: `${tier === 'all' ? 'compaction' : `${tier} compaction`} started`, job_id };
  }

  /** The status record. */
  status(): { enabled: boolean; running: boolean; last_run: string | null; next_run: string | null; stats: JobTotals; schedules: { hourly: string; daily: string } } {
    const s = this.deps.settings;
    return {
      enabled: s.enabled,
      running: this.active.size > 0,
      last_run: this.store.history(1)[0]?.finished_at ?? null,
      next_run: this.schedules?.next()?.toISOString() ?? null,
      stats: this.store.totals(),
      schedules: { hourly: s.hourlySchedule, daily: s.dailySchedule },
    };
  }

  /** Totals plus what runs now and the effective settings. */
  stats() {
    const s = this.deps.settings;
    return {
      ...this.store.totals(),
      active_jobs: this.active.size,
      active_partitions: this.busy.size,
      settings: {
        hourly_min_age_hours: s.hourlyMinAgeHours, hourly_min_files: s.hourlyMinFiles, daily_min_files: s.dailyMinFiles,
        max_concurrent: s.maxConcurrent, max_files_per_batch: s.maxFilesPerBatch, memory_limit_bytes: s.memoryLimitBytes, threads: s.threads,
      },
    };
  }

  /** Partitions with two or more files and whether a tier would compact them now, of the measurements `access` may read. */
  candidates(access: TableAccess, filter: PartitionFilter = {}): { candidates: CandidateView[]; total_candidates: number; eligible_candidates: number } {
    const readable = readableMeasurements(partitionsOf(this.deps.manifest.listAll(filter.database), filter), access);
    const list = candidates(readable, Date.now(), this.deps.settings);
    return { candidates: list, total_candidates: list.length, eligible_candidates: list.filter((c) => c.eligible).length };
  }

  /** Jobs running now that `access` may see, with the errors it may read (job-visibility.ts). */
  jobs(access: TableAccess): ActiveJob[] {
    return [...this.active.values()].filter((j) => jobVisible(access, j)).map((j) => ({ ...j, errors: readableErrors(access, j.errors) }));
  }

  /** Of the last `limit` finished jobs, newest first, those `access` may see, with the errors it may read. */
  history(limit: number, access: TableAccess): JobRecord[] {
    return this.store.history(limit).filter((j) => jobVisible(access, j)).map((j) => ({ ...j, error: readableErrorText(access, j.error) }));
  }

  /** The partitions a tier takes now. */
  private plan(tier: Tier, filter: PartitionFilter): Partition[] {
    const s = this.deps.settings;
    const now = Date.now();
    const parts = partitionsOf(this.deps.manifest.listAll(filter.database), filter);
    const hourly = tier === 'daily' ? [] : parts.filter((p) => hourlyEligible(p, now, s));
    const daily = tier === 'hourly' ? [] : dailyPartitions(parts, now, s);
    return [...new Set([...hourly, ...daily])];
  }

  private async runJob(job: ActiveJob, filter: PartitionFilter): Promise<void> {
    const { logger, metrics, settings } = this.deps;
    await Promise.resolve(); // let trigger() return first
    const parts = this.plan(job.tier as Tier, filter);
    job.partitions = parts.length;
    await Promise.all(parts.map((p) => this.limiter.run(() => this.runPartition(job, p))));
    const { partitions_done: _done, errors, status: _running, ...rest } = job;
    const record: JobRecord = { ...rest, status: errors.length > 0 ? 'failed' : 'completed', finished_at: new Date().toISOString(), error: errors.length > 0 ? errors.join('; ') : null };
    this.active.delete(job.job_id);
    try {
      this.store.record(record);
    } catch (err) {
      logger.error('cannot record compaction job', { job_id: job.job_id, error: messageOf(err) });
    }
    (record.status === 'completed' ? metrics.compactionJobsSuccess : metrics.compactionJobsFailed).inc();
    if (parts.length > 0 || record.status === 'failed')
      logger.info('compaction job finished', { job_id: job.job_id, tier: job.tier, status: record.status, partitions: parts.length, files_in: job.files_in, files_out: job.files_out, bytes_in: job.bytes_in, bytes_out: job.bytes_out, max_files_per_batch: settings.maxFilesPerBatch });
  }

  private async runPartition(job: ActiveJob, p: Partition): Promise<void> {
    const name = partitionName(p);
    if (this.stopping || this.busy.has(name)) {
      job.partitions_skipped++;
      return;
    }
    this.busy.add(name);
    try {
      const merge = () => withMergeEngine(this.deps.settings, `${job.job_id}-${randomId(4)}`, (conn) => compactPartition(this.merge, conn, job.job_id, p, this.deps.settings.maxFilesPerBatch));
      const out = this.deps.locks ? await this.deps.locks.run([p], merge) : await merge();
      job.files_in += out.filesIn;
      job.files_out += out.filesOut;
      job.bytes_in += out.bytesIn;
      job.bytes_out += out.bytesOut;
      job.rows_in += out.rowsIn;
      job.rows_out += out.rowsOut;
      if (out.skipped) {
        job.partitions_skipped++;
        this.deps.logger.info('compaction left a partition as it is', { partition: name, reason: out.skipped });
      }
    } catch (err) {
      job.errors.push(`${name}: ${messageOf(err)}`);
      this.deps.logger.error('cannot compact partition', { job_id: job.job_id, partition: name, error: messageOf(err) });
    } finally {
      this.busy.delete(name);
      job.partitions_done++;
    }
  }
}

/**
 * Tiered storage: which hot files are old enough for the cold tier (measurement policy, else database
 * policy, else tiering.default_hot_max_age_days, by the file's UTC hour partition), the migration job
 * that moves them (by FileMover, `max_concurrent` at a time, on tiering.schedule through the admin
 * scheduler: in a cluster only the active compactor runs it), policies, status and totals.
 */
import type { DatabaseStore, FileManifestStore, ManifestFile } from '../catalog/index.ts';
import { nextFire, type Scheduler } from '../admin/index.ts';
import type { Config } from '../config/index.ts';
import { conflict, messageOf, notFound } from '../lib/errors.ts';
import { isReadable, type TableAccess } from '../lib/table-access.ts';
import type { Logger, SvcMetrics } from '../observability/index.ts';
import type { StorageHealthView } from '../storage/index.ts';
import type { FileMover } from './file-mover.ts';
import type { FilesQuery, MigrateBody, PolicyBody } from './tiering-schema.ts';
import type { FileRow, TieringJob, TieringPolicy, TieringStore, TierTotals } from './tiering-store.ts';
import { jobView, moveError, readableTotals } from './tiering-visibility.ts';

const DAY_US = 86_400_000_000;

/** What the service is built from. */
export interface TieringDeps {
  settings: Config['tiering'];
  manifest: FileManifestStore;
  databases: DatabaseStore;
  store: TieringStore;
  mover: FileMover;
  scheduler: Scheduler;
  metrics: SvcMetrics;
  logger: Logger;
  hotBackend: string;
  /** The cold store's health: a cold tier that cannot be reached is reported, never skipped silently. */
  coldHealth: () => StorageHealthView;
}

/** One file of a migration plan. */
export interface PlannedFile {
  path: string;
  database: string;
  measurement: string;
  bytes: number;
  hour: string;
}

/** The dry run's answer. */
export interface MigrationPlan {
  dry_run: true;
  files: PlannedFile[];
  total_files: number;
  total_bytes: number;
}

/** See the file comment. */
export class TieringService {
  private running: Promise<void> | null = null;
  private runningJob: string | null = null;
  /** A settle between runs (a cluster's hot copies past their grace period); never overlaps a run's moves. */
  private sweeping: Promise<unknown> | null = null;
  private sweepTimer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly deps: TieringDeps) {}

  /**
   * Settles moves a crash left and arms the schedule. In a cluster the hot copies that outlive their
   * switch by the grace period are deleted by a timer once it has passed, not left to the next run.
   */
  async start(): Promise<void> {
    this.deps.store.failInterrupted();
    await this.deps.mover.settle();
    this.deps.scheduler.set('tiering', { cron: this.deps.settings.schedule }, () => this.run('scheduled'));
    const grace = this.deps.mover.graceMs;
    if (grace > 0) this.sweepTimer = setInterval(() => this.sweep(), Math.max(1000, Math.min(60_000, grace / 4)));
  }

  async stop(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    await this.deps.scheduler.stop();
    await this.running;
    await this.sweeping;
  }

  /** Deletes hot copies whose grace period has passed, unless a run is going (its own settle does). */
  private sweep(): void {
    if (this.running || this.sweeping || this.deps.store.openMoves().length === 0) return;
    this.sweeping = this.deps.mover
      .settle()
      .catch((err) => this.deps.logger.warn('cannot delete the hot copies of moved files; retried shortly', { error: messageOf(err) }))
      .finally(() => (this.sweeping = null));
  }

  /** GET /status; the last result's error only when `access` may read what it names. */
  status(access: TableAccess) {
    const cold = this.deps.coldHealth();
    const last = this.deps.store.lastFinished();
    return {
      enabled: true,
      hot_backend: this.deps.hotBackend,
      cold_backend: cold.backend,
      cold_state: cold.state,
      cold_error: cold.state === 'healthy' ? null : (cold.error ?? null),
      running: this.running !== null,
      running_job: this.runningJob,
      last_run: last?.finished_at ?? null,
      next_run: nextFire(this.deps.settings.schedule)?.toISOString() ?? null,
      last_result: jobView(access, last),
    };
  }

  /** The policies about data `access` may read (a database's: some measurement of it). */
  policies(access: TableAccess): TieringPolicy[] {
    return this.deps.store.policies().filter((p) => isReadable(access, p.database, p.measurement));
  }

  /** One policy; 404 when unknown, and also when `access` may not read its target, so the answer names nothing. */
  policy(id: string, access: TableAccess): TieringPolicy {
    const p = this.deps.store.policy(id);
    if (!p || !isReadable(access, p.database, p.measurement)) throw notFound(`tiering policy '${id}' not found`);
    return p;
  }

  /** Creates a policy; 409 when its target already has one. */
  createPolicy(body: PolicyBody): TieringPolicy {
    this.requireDatabase(body.database);
    const measurement = body.measurement ?? null;
    if (this.deps.store.policyFor(body.database, measurement)) throw conflict(`a tiering policy for ${target(body.database, measurement)} already exists`);
    const now = new Date().toISOString();
    const p: TieringPolicy = { id: crypto.randomUUID(), database: body.database, measurement, hot_max_age_days: body.hot_max_age_days, created_at: now, updated_at: now };
    this.deps.store.savePolicy(p);
    return p;
  }

  updatePolicy(id: string, body: PolicyBody): TieringPolicy {
    const old = this.deps.store.policy(id);
    if (!old) throw notFound(`tiering policy '${id}' not found`);
    this.requireDatabase(body.database);
    const measurement = body.measurement ?? null;
    const other = this.deps.store.policyFor(body.database, measurement);
    if (other && other.id !== id) throw conflict(`a tiering policy for ${target(body.database, measurement)} already exists`);
    const p: TieringPolicy = { ...old, database: body.database, measurement, hot_max_age_days: body.hot_max_age_days, updated_at: new Date().toISOString() };
    this.deps.store.savePolicy(p);
    return p;
  }

  deletePolicy(id: string): void {
    if (!this.deps.store.deletePolicy(id)) throw notFound(`tiering policy '${id}' not found`);
  }

  /** GET /files: the files of measurements `access` may read. */
  files(q: FilesQuery, access: TableAccess): { files: (Omit<FileRow, 'hour'> & { hour: string })[]; count: number } {
    const files = this.deps.store.files(q, (f) => isReadable(access, f.database, f.measurement)).map((f) => ({ ...f, hour: hourText(f.hour) }));
    return { files, count: files.length };
  }

  /** GET /stats: totals of the measurements `access` may read. */
  stats(access: TableAccess): { hot: TierTotals; cold: TierTotals; by_database: Record<string, { hot: TierTotals; cold: TierTotals }> } {
    return readableTotals(this.deps.store.totals(), access);
  }

  /** POST /migrate: the plan on a dry run (nothing moves), else a background job. */
  migrate(body: MigrateBody): MigrationPlan | { job_id: string } {
    if (body.database !== undefined) this.requireDatabase(body.database);
    const due = this.due(body);
    if (body.dry_run) {
      const files = due.map((f) => ({ path: f.path, database: f.database, measurement: f.measurement, bytes: f.bytes, hour: hourText(f.hour) }));
      return { dry_run: true, files, total_files: files.length, total_bytes: files.reduce((n, f) => n + f.bytes, 0) };
    }
    if (this.running) throw conflict('a tiering migration is already running', { job_id: this.runningJob });
    return { job_id: this.launch('manual', body) };
  }

  /** One job as stored, or 404; its error only when `access` may read what it names. */
  job(id: string, access: TableAccess): TieringJob {
    const j = this.deps.store.job(id);
    if (!j) throw notFound(`tiering job '${id}' not found`);
    return jobView(access, j);
  }

  /** A scheduled run (skipped when a manual one is going). */
  private async run(trigger: TieringJob['trigger']): Promise<void> {
    if (this.running) return;
    this.launch(trigger, {});
    await this.running;
  }

  private launch(trigger: TieringJob['trigger'], body: Pick<MigrateBody, 'database' | 'older_than_days'>): string {
    const id = crypto.randomUUID();
    this.deps.store.startJob(id, trigger);
    this.runningJob = id;
    this.running = this.work(id, body).finally(() => {
      this.running = null;
      this.runningJob = null;
    });
    return id;
  }

  private async work(id: string, body: Pick<MigrateBody, 'database' | 'older_than_days'>): Promise<void> {
    const { mover, metrics, logger, store, settings } = this.deps;
    const totals = { files: 0, bytes: 0, failures: 0, error: null as string | null };
    try {
      // A sweep between runs settles the same moves: it finishes before this run begins any.
      await this.sweeping;
      await mover.settle();
      // Left-over hot copies cost space only: failing to delete them does not stop the run.
      const strays = await mover.dropStrayHotCopies().catch((err) => {
        logger.warn('cannot delete hot copies of cold files a node which left had kept; retried at the next run', { error: messageOf(err) });
        return 0;
      });
      if (strays > 0) logger.info('deleted hot copies of cold files that a node which left had moved', { files: strays });
      const queue = this.due(body);
      const worker = async () => {
        for (let f = queue.shift(); f; f = queue.shift()) {
          try {
            const out = await mover.move(f);
            if (!out.moved) continue;
            totals.files++;
            totals.bytes += out.bytes;
            metrics.tieringFilesMoved.inc();
            metrics.tieringBytesMoved.inc(out.bytes);
          } catch (err) {
            totals.failures++;
            metrics.tieringFailures.inc();
            totals.error = moveError(f.path, messageOf(err));
            logger.error('cannot move a data file to the cold tier; it stays hot', { path: f.path, error: messageOf(err) });
          }
        }
      };
      await Promise.all(Array.from({ length: settings.max_concurrent }, worker));
      // Hot copies that queries still held when their file switched go once those queries end.
      for (let i = 0; i < 30 && !mover.keepsHotCopies && store.openMoves().length > 0; i++) {
        await mover.settle();
        if (store.openMoves().length > 0) await Bun.sleep(1000);
      }
    } catch (err) {
      totals.error = messageOf(err);
    }
    store.finishJob(id, totals);
    logger.info('tiering migration finished', { job_id: id, files_moved: totals.files, bytes_moved: totals.bytes, failures: totals.failures });
  }

  /** Hot files whose hour is older than their age limit (`older_than_days` overrides the policies). */
  private due(body: Pick<MigrateBody, 'database' | 'older_than_days'>): ManifestFile[] {
    const now = Date.now() * 1000;
    const policies = this.deps.store.policies();
    const ageOf = (db: string, m: string): number =>
      body.older_than_days ??
      policies.find((p) => p.database === db && p.measurement === m)?.hot_max_age_days ??
      policies.find((p) => p.database === db && p.measurement === null)?.hot_max_age_days ??
      this.deps.settings.default_hot_max_age_days;
    // A file's hour partition is older than N days when the hour has ended N days ago.
    return this.deps.manifest.listAll(body.database).filter((f) => f.tier !== 'cold' && f.hour + 3_600_000_000 <= now - ageOf(f.database, f.measurement) * DAY_US);
  }

  private requireDatabase(name: string): void {
    if (!this.deps.databases.get(name) && this.deps.manifest.measurements(name).length === 0) throw notFound(`database '${name}' not found`);
  }
}

const target = (database: string, measurement: string | null) => (measurement ? `${database}.${measurement}` : `database ${database}`);
const hourText = (hourMicros: number) => new Date(hourMicros / 1000).toISOString();

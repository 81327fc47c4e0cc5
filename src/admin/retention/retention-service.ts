/**
 * Retention policies: CRUD, scheduling and execution. A run removes exactly the rows older than
 * cutoff = now - retention_days - buffer_days from the policy's measurement (or every measurement of
 * its database): files wholly older than the cutoff are dropped without being read, a file that
 * straddles it is rewritten keeping rows at or after the cutoff, and buffered rows are flushed first
 * so old ones go too. Every run is recorded with what it removed, its duration and its outcome.
 */
import { ExecutionRunner } from '../execution-runner.ts';
import { conflict, notFound } from '../../lib/errors.ts';
import type { Logger } from '../../observability/index.ts';
import { accessDenied, assertAllowed, isReadable, UNRESTRICTED, type TableAccess } from '../../lib/table-access.ts';
import type { Caller, OwnerAccess } from '../caller.ts';
import type { DefinitionStore, Stored } from '../definition-store.ts';
import type { ExecutionBase, ExecutionStore } from '../execution-store.ts';
import type { RowRemover } from '../rewrite/row-remover.ts';
import type { Scheduler } from '../scheduler.ts';
import { toPolicy, type RetentionInput, type RetentionPolicy } from './retention-schema.ts';

const DAY_MS = 86_400_000;

/** A policy as the API shows it: the stored fields plus `duration` in its `<n>d` form. */
export type RetentionPolicyView = Stored<RetentionPolicy> & { duration: string };

/** One run of a policy. */
export interface RetentionExecution extends ExecutionBase {
  policy_id: number;
  /** Rows strictly older than this instant were removed. */
  cutoff: string;
  measurements: string[];
  rows_deleted: number;
  files_deleted: number;
  files_rewritten: number;
  failed_files: string[];
}

/** Collaborators, built by main.ts. */
export interface RetentionDeps {
  store: DefinitionStore<RetentionPolicy>;
  executions: ExecutionStore;
  remover: RowRemover;
  /** Measurements with files or buffered rows in a database. */
  measurementsOf(database: string): string[];
  scheduler: Scheduler;
  /** The access of a policy's owner at the moment of a run. */
  ownerAccess: OwnerAccess;
  /** `retention.enabled` (scheduling on) and `retention.schedule` (the default cron). */
  settings: { enabled: boolean; schedule: string };
  logger: Logger;
}

const view = (p: Stored<RetentionPolicy>): RetentionPolicyView => ({ ...p, duration: `${p.retention_days}d` });

/** See the file comment. */
export class RetentionService {

  private readonly runs: ExecutionRunner;

  constructor(private readonly deps: RetentionDeps) {
    this.runs = new ExecutionRunner(deps.executions, 'retention');
  }

  /** Marks runs cut off by a restart as failed and schedules every enabled policy. */
  start(): void {
    this.deps.executions.failInterrupted(new Date().toISOString());
    for (const p of this.deps.store.list()) this.schedule(p);
  }

  /** Every policy about data `access` may read. */
  list(access: TableAccess): RetentionPolicyView[] {
    return this.deps.store.list().filter((p) => isReadable(access, p.database, p.measurement)).map(view);
  }

  /** One policy; 404 when unknown or when `access` may not read what it covers (see find). */
  get(id: number, access: TableAccess): RetentionPolicyView {
    return view(this.find(id, access));
  }

  /** Creates a policy (400 on bad fields, 409 on a taken name) and schedules it. */
  create(input: RetentionInput, caller: Caller): RetentionPolicyView {
    const policy = owned(toPolicy(input), caller);
    if (this.deps.store.nameTaken(policy.name)) throw conflict(`retention policy '${policy.name}' already exists`);
    const stored = this.deps.store.insert(policy);
    this.schedule(stored);
    return view(stored);
  }

  /** Updates a policy; the new definition (and schedule) applies from its next run. */
  update(id: number, input: RetentionInput, caller: Caller): RetentionPolicyView {
    const policy = owned(toPolicy(input, this.find(id)), caller);
    if (this.deps.store.nameTaken(policy.name, id)) throw conflict(`retention policy '${policy.name}' already exists`);
    const stored = this.deps.store.update(id, policy)!;
    this.schedule(stored);
    return view(stored);
  }

  /** Deletes a policy, its schedule and its history; 404 when unknown. */
  delete(id: number): void {
    this.find(id);
    this.deps.scheduler.remove(key(id));
    this.deps.store.delete(id);
    this.deps.executions.deleteOwner('retention', id);
  }

  /** The newest executions of a policy (404 when unknown). */
  executions(id: number, limit: number, access: TableAccess): RetentionExecution[] {
    this.get(id, access);
    return this.deps.executions.list<RetentionExecution>('retention', id, limit);
  }

  /** Runs a policy now; 409 while a run of it is going. Resolves to the recorded execution. */
  async execute(id: number, trigger: 'manual' | 'schedule' = 'manual', now = Date.now()): Promise<RetentionExecution> {
    const policy = this.find(id);
    const cutoffMs = now - (policy.retention_days + policy.buffer_days) * DAY_MS;
    const cutoffUs = cutoffMs * 1000;
    const measurements = policy.measurement ? [policy.measurement] : this.deps.measurementsOf(policy.database);
    const fields = {
      policy_id: policy.id,
      cutoff: new Date(cutoffMs).toISOString(),
      measurements,
      rows_deleted: 0,
      files_deleted: 0,
      files_rewritten: 0,
      failed_files: [] as string[],
    };
    const rec = await this.runs.run<RetentionExecution>(id, `retention policy ${id}`, trigger, fields, async (rec) => {
      // The owner's rights now; one measurement it may not delete refuses the run before anything goes.
      assertAllowed(this.deps.ownerAccess(policy.owner_token_id ?? null), 'delete', policy.database, measurements);
      for (const measurement of measurements) {
        const r = await this.deps.remover.remove({
          database: policy.database,
          measurement,
          condition: `time < make_timestamp(${cutoffUs}::BIGINT)`,
          columns: ['time'],
          maxTime: cutoffUs - 1,
          wholeFile: (f) => f.maxTime < cutoffUs,
        });
        rec.rows_deleted += r.deleted_rows;
        rec.files_deleted += r.deleted_files;
        rec.files_rewritten += r.rewritten_files;
        rec.failed_files.push(...r.failed_files);
      }
      if (rec.failed_files.length > 0) {
        rec.status = 'partial';
        rec.error = `cannot remove old rows from ${rec.failed_files.length} file(s); they are retried on the next run`;
      }
    });
    const log = rec.status === 'success' ? this.deps.logger.info.bind(this.deps.logger) : this.deps.logger.warn.bind(this.deps.logger);
    log('retention policy executed', { policy: policy.name, status: rec.status, rows_deleted: rec.rows_deleted, files_deleted: rec.files_deleted, error: rec.error });
    return rec;
  }

  /** The policy; 404 when unknown, and also when `access` may not read what it covers: a 403 would name that. */
  private find(id: number, access: TableAccess = UNRESTRICTED): Stored<RetentionPolicy> {
    const p = this.deps.store.get(id);
    if (!p || !isReadable(access, p.database, p.measurement)) throw notFound(`retention policy ${id} not found`);
    return p;
  }

  /** (Re)arms the policy's timer; disabled policies (or retention.enabled = false) have none. */
  private schedule(p: Stored<RetentionPolicy>): void {
    const { scheduler, settings } = this.deps;
    if (!settings.enabled || !p.enabled) return scheduler.remove(key(p.id));
    scheduler.set(key(p.id), { cron: p.schedule ?? settings.schedule }, async () => {
      // A run still going is not overlapped; the next fire tries again.
      if (this.runs.isRunning(p.id) || !this.deps.store.get(p.id)) return;
      await this.execute(p.id, 'schedule');
    });
  }
}

const key = (id: number) => `retention:${id}`;

/** `policy` owned by `caller`: 403 unless its access may delete what the policy covers. */
function owned(policy: RetentionPolicy, caller: Caller): RetentionPolicy {
  if (policy.measurement) assertAllowed(caller.access, 'delete', policy.database, [policy.measurement]);
  else if (!caller.access.allowsDatabase('delete', policy.database)) throw accessDenied('delete', policy.database, '*');
  return { ...policy, owner_token_id: caller.tokenId };
}

/**
 * Builds the data-lifecycle features from their collaborators: databases, delete, retention
 * policies and continuous queries, sharing one row remover, one set of measurement locks, one
 * scheduler and one sandboxed DuckDB instance for maintenance (it may read and write only under the
 * storage root, where data files and the store's scratch folder live).
 */
import { StartupError } from '../lib/errors.ts';
import type { BufferSet } from '../buffer/index.ts';
import type { CatalogDb, DatabaseStore, FileManifestStore } from '../catalog/index.ts';
import type { Config } from '../config/index.ts';
import { ConnectionPool, createSandboxedInstance } from '../duckdb/index.ts';
import type { ColumnBatch } from '../ingest/index.ts';
import type { Logger } from '../observability/index.ts';
import type { QueryService } from '../query/index.ts';
import type { FileReaper, ObjectStore } from '../storage/index.ts';
import { cronProblem } from './cron.ts';
import { ContinuousQueryService } from './continuous-queries/cq-service.ts';
import type { ContinuousQuery } from './continuous-queries/cq-schema.ts';
import { DatabaseService } from './databases/database-service.ts';
import { DefinitionStore } from './definition-store.ts';
import { DeleteService } from './delete/delete-service.ts';
import { ExecutionStore } from './execution-store.ts';
import { MeasurementLocks } from './measurement-locks.ts';
import type { RetentionPolicy } from './retention/retention-schema.ts';
import { RetentionService } from './retention/retention-service.ts';
import type { TableAccess } from '../lib/table-access.ts';
import type { OwnerAccess } from './caller.ts';
import { RowRemover } from './rewrite/row-remover.ts';
import { Scheduler } from './scheduler.ts';

/** What the lifecycle features are built from (all owned by main.ts). */
export interface LifecycleDeps {
  config: Config;
  catalog: CatalogDb;
  manifest: FileManifestStore;
  store: ObjectStore;
  reaper: FileReaper;
  buffers: Pick<BufferSet, 'measurements' | 'flushMeasurement' | 'dropDatabase'>;
  databases: DatabaseStore;
  queries: Pick<QueryService, 'run' | 'estimate'>;
  write(database: string, batches: ColumnBatch[], access: TableAccess): Promise<number>;
  /** The access of the owner of a continuous query or retention policy, at the moment of a run. */
  ownerAccess: OwnerAccess;
  /** Absolute storage root (the only folder the maintenance instance may touch). */
  root: string;
  /** Further folders it may read data files from (the cold tier's root or read cache). */
  extraRoots?: readonly string[];
  logger: Logger;
  /** Shared with compaction, so rewrites of a measurement never run beside its merge. */
  locks: MeasurementLocks;
  /** False skips scheduled retention and continuous-query runs (a cluster node that is not the active compactor). */
  mayRunScheduled?: () => boolean;
}

/** The built services; `start` arms the schedules (after WAL replay), `stop` disarms them and closes DuckDB. */
export interface Lifecycle {
  databases: DatabaseService;
  deletes: DeleteService;
  retention: RetentionService;
  continuousQueries: ContinuousQueryService;
  start(): void;
  stop(): Promise<void>;
}

/** See the file comment. */
export async function createLifecycle(d: LifecycleDeps): Promise<Lifecycle> {
  const { config, manifest, store, reaper, buffers, logger } = d;
  for (const [name, section] of [['retention', config.retention], ['continuous_queries', config.continuous_queries]] as const) {
    const problem = section.enabled ? cronProblem(section.schedule) : null;
    if (problem) throw new StartupError('config', `${name}.schedule: ${problem}`);
  }
  const instance = await createSandboxedInstance({ allowedDirectories: [d.root, ...(d.extraRoots ?? [])], threads: 1 });
  const pool = new ConnectionPool(instance, 2);
  const locks = d.locks;
  const flushTimeoutMs = Math.max(5000, config.server.write_timeout);
  const remover = new RowRemover({ manifest, store, reaper, buffers, pool, locks, compression: config.ingest.compression, logger, flushTimeoutMs });
  const scheduler = new Scheduler(logger.child({ component: 'scheduler' }), d.mayRunScheduled);
  const executions = new ExecutionStore(d.catalog);
  const measurementsOf = (database: string) => [
    ...new Set([...manifest.measurements(database), ...buffers.measurements(database)].map((m) => m.measurement)),
  ];
  const databases = new DatabaseService({
    databases: d.databases, manifest, store, reaper, locks, buffered: buffers, deleteEnabled: config.delete.enabled, flushTimeoutMs,
  });
  const deletes = new DeleteService({ remover, pool, settings: { enabled: config.delete.enabled, max_rows_per_delete: config.delete.max_rows_per_delete } });
  const retention = new RetentionService({
    store: new DefinitionStore<RetentionPolicy>(d.catalog, 'retention_policies'), executions, remover, measurementsOf, scheduler, ownerAccess: d.ownerAccess,
    settings: { enabled: config.retention.enabled, schedule: config.retention.schedule }, logger,
  });
  const continuousQueries = new ContinuousQueryService({
    store: new DefinitionStore<ContinuousQuery>(d.catalog, 'continuous_queries'), executions, queries: d.queries, remover, write: d.write, ownerAccess: d.ownerAccess, pool, scheduler,
    settings: { enabled: config.continuous_queries.enabled, schedule: config.continuous_queries.schedule }, logger,
  });
  return {
    databases,
    deletes,
    retention,
    continuousQueries,
    start() {
      retention.start();
      continuousQueries.start();
    },
    async stop() {
      // A retention or CQ run in progress finishes before its DuckDB pool and the catalog close.
      await scheduler.stop();
      pool.close();
    },
  };
}

/**
 * Composition root: load config, build every module through constructor arguments, start the
 * listeners, and stop in reverse order on SIGINT/SIGTERM (HTTP first, buffers flushed last).
 */
import type { Server } from 'bun';
import { totalmem } from 'node:os';
import {
  BackupService,
  CompactionService,
  CompactionStore,
  ImportService,
  MeasurementLocks,
  Scheduler,
  checkCron,
  cronProblem,
  compactionSettings,
  createLifecycle,
  createMqttService,
  hasRowsIn,
  recoverCompactions,
  secretKeyPath,
} from './admin/index.ts';
import { AuditLog, SqliteAuditStore } from './audit/index.ts';
import { createRbac, TokenService, TokenStore } from './auth/index.ts';
import { BufferSet, WriteService, reconcileManifest } from './buffer/index.ts';
import { DatabaseStore, FileManifestStore, ReplicationStore, migrations, openCatalog, type CatalogDb } from './catalog/index.ts';
import { ParsePool } from './ingest/index.ts';
import {
  USAGE,
  announceBootstrapToken,
  announceMemoryKey,
  parseCommandLine,
  runBackupCommand,
  runCompletionCommand,
  runExportCommand,
  runImportCommand,
  runQueryCommand,
  runWriteCommand,
  runMcpCommand,
  runTokenCommand,
  type ParsedArgs,
} from './cli/index.ts';
import { ManifestSnapshots, ReplicatedMetadata, SharedManifest, SharedWal, LocalWalCoverage, defaultAdvertiseUrl, openCluster, snapshotKey } from './cluster/index.ts';
import { ConfigError, loadConfig, renderEffectiveConfig, type Config } from './config/index.ts';
import { createGovernance } from './governance/index.ts';
import { consoleRoutes, type MemoryFetch } from './console/index.ts';
import { ConnectionPool, DuckDBInstance, createSandboxedInstance, nativeResultsEnabled, selfCheck } from './duckdb/index.ts';
import {
  auditRoutes,
  backupRoutes,
  clusterRoutes,
  compactionRoutes,
  continuousQueryRoutes,
  createApp,
  databaseRoutes,
  deleteRoutes,
  disabledRoutes,
  governanceRoutes,
  exportRoutes,
  importRoutes,
  lineProtocolWriteRoutes,
  promWriteRoutes,
  listen,
  logsRoutes,
  metricsRoutes,
  mqttRoutes,
  msgpackWriteRoutes,
  queryManagementRoutes,
  queryRoutes,
  requestBody,
  retentionRoutes,
  tieringOffRoutes,
  tieringRoutes,
  walRoutes,
} from './http/index.ts';
import { ByteBudget } from './lib/byte-budget.ts';
import { ServiceStack } from './lib/service-stack.ts';
import { AppError, StartupError, messageOf } from './lib/errors.ts';
import { configureNative, RETAIN_FREED_MEMORY, restartWithEnv } from './native/index.ts';
import { Readiness } from './lib/readiness.ts';
import { UNRESTRICTED } from './lib/table-access.ts';
import { VERSION } from './lib/version.ts';
import { createMemoryService, svcFetch } from './memory/index.ts';
import { Logger, createSvcMetrics, memoryDetail, startDiagnostics, startMetricsRuntime } from './observability/index.ts';
import { ManifestTableSource, QueryService, WholeBodies } from './query/index.ts';
import { startPgWire } from './pgwire/index.ts';
import { CLUSTER_SHARED_STORAGE, FileReaper, holdStorageLock, meteredStore, openObjectStore, storageGate, type OpenedStore } from './storage/index.ts';
import { entryId, openWal, type WalTicket } from './wal/index.ts';
import { FileMover, TieredObjectStore, TieringService, TieringStore, openColdStore } from './tiering/index.ts';

/**
 * Metadata a cluster keeps in etcd. A token's last use alone is not worth a round trip, and the
 * in-process memory service's token belongs to one process.
 */
const REPLICATED_TABLES = [
  { table: 'tokens', key: 'id', quietColumns: ['last_used_at'], localOnly: (r: string) => `${r}name = 'memory-service'` },
  // Postgres wire verifiers are salted with the installation's one salt: every node needs the same.
  { table: 'scram_salt', key: 'id' },
  { table: 'databases', key: 'name' },
  { table: 'retention_policies', key: 'id' },
  { table: 'continuous_queries', key: 'id' },
  { table: 'mqtt_subscriptions', key: 'id' },
  { table: 'governance_policies', key: 'id' },
  { table: 'tiering_policies', key: 'id' },
  // Parents before children: a full reload replaces tables in this order.
  ...['rbac_organizations', 'rbac_teams', 'rbac_members', 'rbac_roles', 'rbac_measurement_grants'].map((table) => ({ table, key: 'id' })),
];

/** A running server: its listeners and the way to stop it. */
export interface RunningServices {
  config: Config;
  ports: { timeseries: number; memory: number | null };
  stop(reason?: string): Promise<void>;
}

/**
 * Builds and starts every part of the server from a loaded config. Each part is recorded in one
 * ServiceStack as it starts; stopping (or a start-up that fails half way) runs it backwards.
 */
export async function startServices(config: Config, env: Record<string, string | undefined> = process.env, opts: { configPath?: string | null } = {}): Promise<RunningServices> {
  const logger = new Logger({ level: config.log.level, format: config.log.format, bufferSize: config.log.buffer_size });
  const services = new ServiceStack((name, err) => logger.error('cannot stop cleanly', { service: name, error: messageOf(err) }));
  try {
    return await composeServices(config, env, opts, logger, services);
  } catch (err) {
    await services.stopAll();
    throw err;
  }
}

async function composeServices(
  config: Config,
  env: Record<string, string | undefined>,
  opts: { configPath?: string | null },
  logger: Logger,
  services: ServiceStack,
): Promise<RunningServices> {
  const metrics = createSvcMetrics();
  const readiness = new Readiness();
  // GC counter, once-per-second gauges (owners add theirs with observed.sampler.add) and metrics history.
  const observed = startMetricsRuntime(metrics, config.metrics, logger);
  services.add('metrics runtime', () => observed.stop());

  // Storage first, and its one-server lock before the catalog or any data file is touched.
  // A remote store's read cache never evicts a file a running query holds (the reaper's leases).
  let leases: FileReaper | null = null;
  const opened = await openObjectStore(config.storage, { inUse: (key) => leases?.inUse(key) ?? false, logger });
  services.add('object store', () => opened.close());
  await watchStorage(opened, config, readiness, logger);
  // Tiering: one store over hot and cold; the manifest (opened below) says which tier holds a file.
  let manifestRef: FileManifestStore | null = null;
  const cold = config.tiering.enabled ? await openColdStore(config.storage, config.tiering, { inUse: (key) => leases?.inUse(key) ?? false, logger }) : null;
  if (cold) {
    services.add('cold object store', () => cold.close());
    readiness.addCheck('cold storage', () => coldProblem(cold));
    const problem = coldProblem(cold);
    if (problem) logger.error('the cold tier is not usable; tiering moves fail and cold files cannot be read until it works again', { error: problem });
  }
  const tiered = cold ? new TieredObjectStore(opened.store, cold.store, () => manifestRef) : null;
  const store = meteredStore(tiered ?? opened.store, metrics);
  // One server per storage: the lock is held before any data file is read, written or deleted. Cluster
  // nodes share their bucket by design; etcd's elections and manifest transactions keep them apart.
  const storageLock = config.cluster.enabled
    ? CLUSTER_SHARED_STORAGE
    : await holdStorageLock(opened.lockSlot, { expiryMs: config.storage.lock_expiry, retryMs: 2_000, logger });
  services.add('storage lock', () => storageLock.release());
  // A store that refuses (missing bucket, refused credentials) or a lock not held: /ready says why, writes get 503.
  const gate = storageGate(opened.health, storageLock);
  readiness.addCheck('storage access', () => gate.readyProblem());

  const catalog: CatalogDb = openCatalog(config.auth.db_path, migrations);
  services.add('catalog', () => catalog.close());
  const tokenStore = new TokenStore(catalog);
  const tokens = new TokenService(tokenStore, { cacheTtlSec: config.auth.cache_ttl, maxCacheSize: config.auth.max_cache_size });
  // The one authorizer: every route's access, and that of the owners of continuous queries and retention policies.
  // It walls off the system databases, where svc keeps its own state (the memory service's, even while
  // that service runs elsewhere or is off): only their service's token and admins reach them.
  const systemDatabases = [config.memory.database];
  const { authorizer, rbac } = createRbac(catalog, tokenStore, config.rbac.enabled, systemDatabases);
  if (config.auth.enabled) announceBootstrapToken(tokens.bootstrap(env.SVC_AUTH_BOOTSTRAP_TOKEN));

  await selfCheck();
  configureNative({ enabled: config.query.native_encoders, warn: (message) => logger.warn(message) });
  // Sets up in-place result reading now (a few ms of compiling) rather than in the first query.
  const resultsInPlace = nativeResultsEnabled();

  // Write path: manifest check, buffers + flush workers (own DuckDB instance), write service.
  const manifest = new FileManifestStore(catalog);
  if (tiered) {
    manifestRef = manifest;
    manifest.setPlacement((path) => tiered.takePlacement(path));
  }
  // In a cluster etcd owns the file manifest: this node's copy is loaded from it and every change
  // goes through it, before anything (WAL replay, recovery) can register a file.
  const cluster = await openCluster(config.cluster, { storageBackend: config.storage.backend, coldBackend: config.tiering.enabled ? config.tiering.cold_backend : null, port: config.server.port, version: VERSION, logger });
  // The node leaves (handing its roles on) only after its buffers are flushed through the shared manifest.
  if (cluster) services.add('cluster membership', () => cluster.stop());
  const manifestLog = logger.child({ component: 'shared-manifest' });
  const snapshots = cluster && config.cluster.manifest_snapshot_interval > 0 ? new ManifestSnapshots(store, snapshotKey(config.cluster.name), cluster.settings.prefix, manifestLog) : null;
  // Registrations are fenced by this node's election (a writer's always): a deposed primary registers nothing.
  const sharedManifest = cluster
    ? new SharedManifest(cluster.client, cluster.settings.prefix, manifest, manifestLog, () => cluster.commitFence(), snapshots, () => cluster.stepDown('a manifest registration was fenced'))
    : null;
  // A writer acknowledges a write once it is in the shared WAL (bucket + etcd), not only on its own disk.
  // With failover off no standby ever takes over a dead writer's buffer (the role waits for that node
  // or an operator), so its own WAL is as durable as a standalone server's, and a write does not wait
  // for a PUT and a transaction; its shared WAL then only replays what a run with failover on left.
  const sharedWal =
    cluster && config.cluster.role === 'writer'
      ? new SharedWal({
          client: cluster.client,
          store,
          prefix: cluster.settings.prefix,
          clusterName: config.cluster.name,
          nodeId: cluster.settings.nodeId,
          groupCommitMs: config.cluster.wal_group_commit,
          fence: () => cluster.commitFence()!,
          onFenced: (reason) => cluster.stepDown(reason),
          onPending: (n) => metrics.walSharedSegmentsPending.set(n),
          onUnreadable: () => metrics.walSharedSegmentsUnreadable.inc(),
          onWithdrawn: () => metrics.walSharedWithdrawn.inc(),
          onCommit: (c) => {
            metrics.walSharedCommits.inc();
            metrics.walSharedEntries.inc(c.entries);
            metrics.walSharedBytes.inc(c.bytes);
            metrics.walSharedPutSeconds.inc(c.putMs / 1000);
            metrics.walSharedCommitSeconds.inc(c.totalMs / 1000);
          },
          log: logger.child({ component: 'shared-wal' }),
        })
      : null;
  const sharedAppends = sharedWal && config.cluster.failover_enabled ? sharedWal : null;
  if (sharedWal) {
    if (sharedAppends && config.wal.enabled) logger.warn('wal.enabled is ignored on a cluster writer: the shared WAL (bucket + etcd) holds every write until it is flushed');
    if (!sharedAppends) logger.info(`cluster.failover_enabled is false: writes are acknowledged ${config.wal.enabled ? "once in this node's WAL" : 'once buffered (wal.enabled is false)'}, not in the shared WAL`);
    sharedManifest!.coverage = (covers) => sharedWal.coverage(covers);
    services.add('shared wal', () => sharedWal.close());
  }
  if (sharedManifest) {
    await sharedManifest.start();
    manifest.setJournal(sharedManifest);
    cluster!.manifestRevision = () => sharedManifest.revision;
    cluster!.manifestCatchUp = () => sharedManifest.catchUp();
    // The active compactor keeps the bucket's snapshot current, for nodes that join later.
    sharedManifest.startSnapshots(config.cluster.manifest_snapshot_interval, () => cluster!.settings.role === 'compactor' && cluster!.isLeader);
    services.add('shared manifest', () => sharedManifest.close());
  }
  // Tokens, databases and policies too: etcd's rows replace this node's before it serves anything.
  let databasesChanged = () => {};
  let governancePoliciesChanged = () => {};
  const replicated = cluster
    ? new ReplicatedMetadata(cluster.client, cluster.settings.prefix, new ReplicationStore(catalog, REPLICATED_TABLES), logger.child({ component: 'replicated-metadata' }), (table) => {
        if (table === 'tokens') tokens.invalidateCache();
        if (table.startsWith('rbac_')) authorizer.invalidate();
        if (table === 'databases') databasesChanged();
        if (table === 'governance_policies') governancePoliciesChanged();
      })
    : null;
  if (replicated) {
    await replicated.start(cluster!.settings.nodeId);
    services.add('replicated metadata', () => replicated.close());
  }
  // Interrupted compactions are settled first: the reaper and the rebuild below must see their outcome.
  const compactionConf = compactionSettings(config);
  if (compactionConf.enabled) for (const k of ['hourly_schedule', 'daily_schedule'] as const) checkCron(`compaction.${k}`, config.compaction[k]);
  const tieringCron = config.tiering.enabled ? cronProblem(config.tiering.schedule) : null;
  if (tieringCron) throw new StartupError('config', `tiering.schedule: ${tieringCron}`);
  await recoverCompactions({ jobs: new CompactionStore(catalog), manifest, store, metrics, logger, tempDirectory: compactionConf.tempDirectory });
  // Files replaced before a crash are deleted before the rebuild, which would otherwise take them back.
  const reaper = new FileReaper({ store, manifest, logger, graceMs: cluster ? config.cluster.file_grace_period : 0 });
  leases = reaper;
  await reaper.collect();
  // One lock set per process: delete, retention, CQ replace, database drop, compaction and tiering's switch take it per measurement.
  const locks = new MeasurementLocks();
  // Moves a crash interrupted are settled before the rebuild below lists storage.
  const tieringStore = new TieringStore(catalog);
  const mover = tiered
    ? new FileMover({ hot: tiered.hot, cold: tiered.cold, manifest, store: tieringStore, inUse: (key) => reaper.inUse(key), crashAt: config.tiering.test_crash_at, locks, graceMs: cluster ? config.cluster.file_grace_period : 0 })
    : null;
  if (mover) await mover.settle().catch((err) => logger.error('cannot settle interrupted tiering moves; retried at the next migration', { error: messageOf(err) }));
  const writeDuck = await DuckDBInstance.create(':memory:');
  services.add('write engine', () => writeDuck.closeSync());
  const reconcileConn = await writeDuck.connect();
  // An unreachable object store must not keep the server down (writes buffer, /health tells why).
  // A cluster node's manifest is etcd's, not a listing of the bucket.
  if (!cluster) await reconcileManifest({ store, manifest, conn: reconcileConn, logger }).catch((err) =>
    logger.error('cannot reconcile the file manifest with storage; files it does not list stay unknown until a restart', { error: messageOf(err) }),
  );
  reconcileConn.closeSync();
  // The WAL opens before the buffers (they release its tickets); its files are replayed before /ready.
  const wal = await openWal(config.wal, metrics, logger);
  services.add('wal', () => wal.close());
  // Failover off: the flushes' registrations record the local WAL entries they hold, so a crash before
  // the release records (or part way through a flush intent) replays none of them twice.
  const localCoverage =
    cluster && sharedWal && !sharedAppends && wal.enabled
      ? new LocalWalCoverage(cluster.client, cluster.settings.prefix, cluster.settings.nodeId, (entry) => wal.holds(entry), logger.child({ component: 'wal' }))
      : null;
  if (localCoverage) {
    sharedManifest!.coverage = (covers) => [...sharedWal!.coverage(covers), ...localCoverage.coverage(covers)];
    services.add('local wal coverage', () => localCoverage.stop());
  }
  const i = config.ingest;
  const buffers = await BufferSet.create(
    { instance: writeDuck, store, manifest, metrics, logger, onRelease: (ticket) => wal.release(ticket as WalTicket) },
    {
      maxBufferSize: i.max_buffer_size,
      maxBufferAgeMs: i.max_buffer_age_ms,
      flushWorkers: i.flush_workers,
      flushWorkerNice: i.flush_worker_nice,
      settleFilesInWorkers: config.storage.backend === 'local' && config.storage.drop_page_cache,
      flushQueueSize: i.flush_queue_size,
      compression: i.compression,
      admissionTimeoutMs: Math.min(10_000, config.server.write_timeout / 2),
      maxHeldRecords: i.max_buffer_size * i.shard_count,
      maxBufferedBytes: maxBufferedBytes(config),
      flushMaxAttempts: i.flush_max_attempts,
      setAsideDir: i.set_aside_path,
    },
  );
  // Every acknowledged row goes to Parquet before the WAL, the engine and the catalog close.
  services.add('buffers', () => buffers.stop());
  observed.sampler.add(metrics.bufferRecords, () => buffers.bufferedRecords());
  observed.sampler.add(metrics.bufferBytes, () => buffers.bufferedBytes());
  metrics.bufferBytesLimit.set(maxBufferedBytes(config));
  // In a cluster only the active compactor runs the scheduled singletons (compaction, retention, CQs).
  const mayRunScheduled = () => !config.cluster.enabled || config.cluster.role === 'standalone' || (config.cluster.role === 'compactor' && (cluster?.isLeader ?? false));
  const compaction = new CompactionService({
    settings: compactionConf, catalog, manifest, store, reaper, metrics, logger, locks, mayRunScheduled,
    unflushed: (database, measurement, from, to) => hasRowsIn(buffers.snapshot(database, measurement), from, to),
  });
  const backups = new BackupService({
    enabled: config.backup.enabled, root: config.backup.local_path, store, manifest, reaper, catalog, logger,
    flushAll: () => buffers.flushAll(),
    dbPath: config.auth.db_path,
    configPath: opts.configPath ?? null,
    effectiveConfig: renderEffectiveConfig(config, opts.configPath ? `${opts.configPath} and the environment` : 'environment variables and defaults'),
    secretKeyPath: config.mqtt.encryption_key ? null : secretKeyPath(config.auth.db_path),
    // The in-process memory service's token exists only in this process's database; a restore keeps it.
    keep: [{ table: 'tokens', where: "name = 'memory-service'" }],
    onMetadataRestored: () => {
      tokens.invalidateCache();
      authorizer.invalidate();
      governance.policies?.reload();
    },
  });
  // One DatabaseStore for the whole process: it caches known names, so a second instance would go stale.
  const databases = new DatabaseStore(catalog);
  databasesChanged = () => databases.reload();
  const writes = new WriteService({ buffers, databases, metrics, wal: wal.enabled && !sharedAppends ? wal : null, sharedWal: sharedAppends, storageProblem: () => gate.writeProblem() });
  if (cluster) {
    metrics.clusterIsPrimary.collectFrom(() => (config.cluster.role === 'writer' && cluster.isLeader ? 1 : 0));
    cluster.onFailover = () => metrics.clusterFailovers.inc();
  }
  if (cluster && sharedWal && !sharedAppends) {
    // Failover off: the buffer holds this node's own acknowledged rows (its WAL keeps them), which it
    // flushes once it leads again. Segments a run with failover on left unflushed are buffered once and
    // flushed before any write is taken, so no later demotion can leave them both here and replayed elsewhere.
    const buffered = new Set<string>();
    cluster.onElected = async () => {
      // A large flush recorded as an intent by the last holder (this node before a crash, or a run with
      // failover on) registers the rest of its files and its coverage before anything is replayed.
      await sharedManifest!.completeIntents();
      const n = await sharedWal.replay((database, batches, ticket) => {
        const key = `${ticket.segment}/${ticket.entry}`;
        if (buffered.has(key)) return;
        buffered.add(key);
        buffers.append(database, batches, ticket);
      });
      if (n > 0 && !(await buffers.flushAll(30_000))) throw new Error('cannot flush the shared WAL entries left by a run with failover on within 30 s');
    };
  }
  if (cluster && sharedAppends) {
    const sharedWal = sharedAppends;
    const walLog = logger.child({ component: 'shared-wal' });
    // A new primary buffers what no registered file holds before it takes any write.
    cluster.onElected = async () => {
      buffers.discardAll();
      // A flush the last primary recorded but did not finish registers the rest of its files and its
      // coverage now, so the replay below skips the entries they hold instead of buffering them again.
      await sharedManifest!.completeIntents();
      // A replay whose term ended while it read the bucket (the lease was lost again, a newer take-over
      // began) buffers nothing: its rows would come on top of the next term's own replay of them.
      await sharedWal.replay((database, batches, ticket) => {
        if (sharedWal.current(ticket)) buffers.append(database, batches, ticket);
      });
    };
    // A deposed primary keeps nothing: the new primary replays these rows from the shared WAL.
    cluster.onDemoted = () => {
      sharedWal.endTerm();
      const rows = buffers.discardAll();
      if (rows > 0) walLog.warn('no longer the primary writer: dropped the unflushed rows (the new primary replays them from the shared WAL)', { rows });
    };
  }
  if (cluster && sharedWal) sharedWal.startCollecting(() => cluster.isLeader);
  // Every body read whole shares one memory budget, so concurrent decompression bombs cannot add up.
  const body = requestBody({ maxBytes: config.server.max_payload_size, inflight: new ByteBudget(inflightBodyLimit(config)) });
  // Large line-protocol and MessagePack bodies are parsed in Workers, so both cores take requests (ingest.parse_workers).
  const parsePool = new ParsePool(i.parse_workers, (message) => logger.warn(message));
  services.add('parse-pool', () => parsePool.close());
  const writeDeps = { writes, buffers, metrics, body, parsePool };
  // Query engine: its own sandboxed DuckDB instance that may read only the storage root.
  const querySource = new ManifestTableSource(manifest, opened.readRoot, buffers, databases, { store, reaper });
  const queryDuck = await createSandboxedInstance({
    allowedDirectories: [querySource.root, ...(cold ? [cold.readRoot] : [])],
    memoryLimitBytes: config.database.memory_limit || undefined,
    threads: config.database.threads || undefined,
  });
  const queryPool = new ConnectionPool(queryDuck, config.query.max_concurrent || navigator.hardwareConcurrency || 4);
  services.add('query engine', () => queryPool.close());
  // Query management and governance: every query passes their gate (none when both are off).
  const governance = createGovernance({
    catalog,
    queryManagement: config.query_management.enabled,
    governance: config.governance.enabled,
    tokenOf: (id) => tokenOf(tokens, id),
  });
  const queries = new QueryService(queryPool, querySource, { timeoutMs: config.query.timeout, slowQueryMs: config.query.slow_query_threshold_ms }, metrics, logger, governance.gate);
  const audit = config.audit_log.enabled
    ? new AuditLog(new SqliteAuditStore(catalog), { retentionDays: config.audit_log.retention_days, includeReads: config.audit_log.include_reads }, metrics, logger)
    : null;
  // Daily usage counters and queued audit events are written after the buffers flush, before the catalog closes.
  services.add('governance', () => governance.stop());
  if (audit) services.add('audit log', () => audit.stop());
  governancePoliciesChanged = () => governance.policies?.reload();
  // Databases, delete, retention, continuous queries: one row remover, one scheduler (armed after WAL replay).
  const lifecycle = await createLifecycle({
    config, catalog, manifest, store, reaper, buffers, databases, queries, root: querySource.root, extraRoots: cold ? [cold.readRoot] : [], logger, locks, mayRunScheduled,
    write: (database, batches, access) => writes.write(database, batches, access),
    ownerAccess: (owner) => (owner === null ? UNRESTRICTED : authorizer.accessForToken(owner)),
  });
  // MQTT subscriptions write through the same path as the HTTP routes (names, database, WAL, buffer).
  const mqtt = createMqttService({ catalog, config, logger, write: async (database, batches) => void (await writes.write(database, batches, UNRESTRICTED)) });
  // Bulk imports stage on a DuckDB instance of their own (file access on, every core), never on the sandboxed query one.
  const imports = new ImportService({ store, manifest, databases, buffers, writes, metrics, logger, compression: i.compression });
  services.add('imports', () => imports.stop());
  const tiering = mover && cold
    ? new TieringService({
        settings: config.tiering, manifest, databases, store: tieringStore, mover, metrics, logger: logger.child({ component: 'tiering' }),
        scheduler: new Scheduler(logger, mayRunScheduled), hotBackend: opened.store.backend, coldHealth: () => cold.health.view(),
      })
    : null;

  // The console reaches the in-process memory service through its own origin once that service runs.
  let memoryFetch: MemoryFetch | null = null;
  const app = createApp({
    config,
    logger,
    metrics,
    tokens,
    authorizer,
    rbac,
    readiness,
    audit,
    storageHealth: () => ({ hot: opened.health.view(), ...(cold ? { cold: cold.health.view() } : {}) }),
    bufferHealth: () => {
      const b = buffers.stats();
      return { buffered_bytes: b.buffered_bytes + b.in_flight_bytes, max_buffered_bytes: b.max_buffered_bytes, buffered_records: b.buffered_records + b.in_flight_records, failing: b.failing, set_aside_batches: b.set_aside_batches };
    },
    afterMutation: replicated ? () => replicated.drain() : undefined,
    cluster: cluster ? () => cluster : undefined,
    routers: [
      ['/api/v1/write/msgpack', msgpackWriteRoutes(writeDeps)],
      ['/', lineProtocolWriteRoutes({ ...writeDeps, flushTimeoutMs: config.server.write_timeout })],
      ['/api/v1/prom', promWriteRoutes({ ...writeDeps, maxPayloadBytes: config.server.max_payload_size })],
      ['/', importRoutes({ imports, writes, metrics, body })],
      ['/', metricsRoutes({ metrics, history: observed.history, memory: () => memoryDetail(observed.gc.figures(), metrics.goroutines.value(), readiness.startedAt) })],
      ['/api/v1/logs', logsRoutes(logger)],
      ['/api/v1/mqtt', mqttRoutes(mqtt)],
      ['/api/wal', walRoutes(wal)],
      ['/api/v1/compaction', compactionRoutes(compaction)],
      ['/api/v1/backup', backupRoutes(backups)],
      ['/api/v1/databases', databaseRoutes(lifecycle.databases)],
      ['/api/v1/delete', deleteRoutes(lifecycle.deletes)],
      ['/api/v1/retention', retentionRoutes(lifecycle.retention)],
      ['/api/v1/tiering', tiering ? tieringRoutes(tiering) : tieringOffRoutes(opened.store.backend)],
      ['/api/v1/continuous_queries', continuousQueryRoutes(lifecycle.continuousQueries)],
      ['/api/v1/continuous-queries', continuousQueryRoutes(lifecycle.continuousQueries)],
      ['/api/v1/queries', governance.registry ? queryManagementRoutes(governance.registry) : disabledRoutes('query management', 'query_management.enabled')],
      ['/api/v1/governance', governance.policies ? governanceRoutes(governance, governance.policies) : disabledRoutes('governance', 'governance.enabled')],
      ['/api/v1/audit', audit ? auditRoutes(audit) : disabledRoutes('the audit log', 'audit_log.enabled')],
      ['/api/v1/cluster', clusterRoutes(() => cluster, (database) => manifest.listAll(database))],
      ['/api/v1', exportRoutes(queries)],
      ['/api/v1', queryRoutes(queries, new WholeBodies(config.query.whole_body_memory))],
      ...(config.console.enabled ? [['/', consoleRoutes({ memory: () => memoryFetch })] satisfies [string, unknown]] : []),
    ],
  });

  // query.timeout raises the write timeout (the longest a response may take) unless it is 0.
  const responseTimeoutMs = config.query.timeout > 0 ? Math.max(config.server.write_timeout, config.query.timeout) : config.server.write_timeout;
  const listenBase = {
    maxBodyBytes: Math.max(config.server.max_payload_size, 500 * 1024 * 1024) + 1024,
    idleTimeoutSec: Math.ceil(responseTimeoutMs / 1000),
    tls: config.server.tls_enabled ? { certFile: config.server.tls_cert_file, keyFile: config.server.tls_key_file } : undefined,
  };
  const servers: Server<undefined>[] = [];
  // The listeners start before recovery, so /health answers (and /ready says why not yet) during WAL replay.
  const tsServer = listen(app.fetch, { ...listenBase, host: config.server.host, port: config.server.port });
  servers.push(tsServer);
  services.add('time-series listener', () => tsServer.stop());
  // In-flight work on every listener: svc_goroutines and the diagnostics goroutine view.
  const activity = () => ({
    http_requests: servers.reduce((n, s) => n + s.pendingRequests, 0),
    websockets: servers.reduce((n, s) => n + s.pendingWebSockets, 0),
  });
  metrics.goroutines.collectFrom(() => Object.values(activity()).reduce((a, b) => a + b, 0));

  let memoryPort: number | null = null;
  if (config.memory.enabled) {
    const memoryApp = createMemoryService({
      config: config.memory,
      logger: logger.child({ service: 'memory' }),
      observe: audit
        ? (r) => {
            if (audit.wants(r.method, r.status, r.path))
              audit.record({ service: 'memory', timeMs: Date.now(), tokenId: r.keyId, tokenName: null, clientIp: r.clientIp, method: r.method, path: r.path, status: r.status, durationMs: r.durationMs, database: null });
          }
        : undefined,
      svc: svcFetch({ url: config.memory.svc_url, token: memoryServiceToken(config, tokens), local: async (req) => app.fetch(req) }),
    });
    services.add('memory service', () => memoryApp.close());
    memoryFetch = (req) => memoryApp.fetch(req);
    announceMemoryKey(memoryApp.bootstrapKey);
    const memServer = listen(memoryApp.fetch, { ...listenBase, host: config.memory.host, port: config.memory.port });
    servers.push(memServer);
    services.add('memory listener', () => memServer.stop());
    memoryPort = memServer.port ?? null;
  }

  const diagnostics = startDiagnostics(env, { logger, activity });
  services.add('diagnostics', () => diagnostics?.stop());
  // Replayed rows are buffered with their old entry's ticket; that file stays until they are flushed.
  // Read once, before the replay; records are swept only after it (an entry the replay has not reached
  // yet is not held either, and its record must outlive the release record the replay writes for it).
  const flushed = localCoverage ? await localCoverage.covered() : null;
  await wal.replay(async (database, batches, ticket) => {
    if (flushed?.has(entryId(ticket))) return void wal.release(ticket);
    // Backpressure, not failure: replay waits for flush-queue room as long as it takes.
    while (!(await buffers.waitForRoom().then(() => true, () => false))) await Bun.sleep(100);
    buffers.append(database, batches, ticket);
  });
  localCoverage?.startSweeping();
  // auto_start subscriptions and schedules come back once recovery is done; they stop first, so no
  // new job or message starts while the listeners drain. MQTT: the message in hand is written, then
  // nothing more enters the buffers; a merge in progress finishes (an interrupted one is settled at start).
  await services.start({ name: 'mqtt subscriptions', start: () => mqtt.startAll(), stop: () => mqtt.stopAll() });
  // The Postgres wire door runs the same QueryService as the HTTP query routes.
  let pgwirePort: number | null = null;
  if (config.pgwire.enabled) {
    const pgwire = await startPgWire(
      {
        host: config.pgwire.host,
        port: config.pgwire.port,
        loginTimeoutMs: config.pgwire.login_timeout,
        maxConnections: config.pgwire.max_connections,
        metrics,
        tls: config.server.tls_enabled ? { certFile: config.server.tls_cert_file, keyFile: config.server.tls_key_file } : undefined,
      },
      { tokens, authorizer, queries, audit, authEnabled: config.auth.enabled, logger: logger.child({ component: 'pgwire' }), serverVersion: config.pgwire.server_version, svcVersion: VERSION },
    );
    services.add('postgres wire listener', () => pgwire.stop());
    pgwirePort = pgwire.port;
  }
  await services.start({ name: 'compaction schedules', start: () => compaction.start(), stop: () => compaction.stop() });
  await services.start({ name: 'lifecycle schedules', start: () => lifecycle.start(), stop: () => lifecycle.stop() });
  if (tiering) await services.start({ name: 'tiering schedule', start: () => tiering.start(), stop: () => tiering.stop() });
  governance.start();
  audit?.start();
  // The node joins once it listens (its advertised address needs the port) and is ready.
  if (cluster) {
    await cluster.start(defaultAdvertiseUrl(config.server.host, tsServer.port ?? config.server.port, config.server.tls_enabled));
    cluster.markReady();
    logger.info('joined the cluster', { cluster: config.cluster.name, node_id: cluster.settings.nodeId, role: config.cluster.role });
  }
  readiness.phase = 'ready';
  logger.info('svc started', { version: VERSION, timeseries_port: tsServer.port, memory_port: memoryPort, pgwire_port: pgwirePort, tls: config.server.tls_enabled, query_results: resultsInPlace ? 'read in place' : 'copied through node-api' });

  let stopping: Promise<void> | null = null;
  const stop = (reason = 'stop requested') =>
    (stopping ??= (async () => {
      readiness.phase = 'stopping';
      logger.info('svc stopping', { reason });
      // A primary writer hands over first: queued writes committed, buffers flushed, election resigned.
      const handedOver =
        cluster && sharedWal
          ? await cluster.handOver(async () => {
              await sharedWal.drain();
              await buffers.flushAll(config.server.shutdown_timeout / 2);
            })
          : false;
      // The listener stays up for two heartbeats, answering "not the primary" (which forwarding nodes
      // resend to the successor) until every node's view names the successor: no write meets a closed socket.
      if (handedOver) await Bun.sleep(Math.min(2000, 2 * config.cluster.heartbeat_interval));
      const work = services.stopAll();
      const timedOut = await Promise.race([work.then(() => false), Bun.sleep(config.server.shutdown_timeout).then(() => true)]);
      if (timedOut) logger.error('shutdown timed out; unfinished work abandoned', { timeout_ms: config.server.shutdown_timeout });
      const unflushed = buffers.bufferedRecords();
      if (unflushed > 0)
        logger.error(`could not flush ${unflushed} rows before stopping`, {
          rows: unflushed,
          last_error: buffers.stats().last_error,
          wal: wal.enabled ? 'the WAL keeps them; they are replayed at the next start' : 'the WAL is off: they are lost',
        });
      if (!timedOut) logger.info('svc stopped');
    })());

  return { config, ports: { timeseries: tsServer.port ?? config.server.port, memory: memoryPort }, stop };
}

/**
 * Probes the store once at start-up (a remote store keeps probing every 30 s on its own) and, with
 * server.storage_credentials_fail_ready, makes refused or missing credentials fail /ready.
 */
async function watchStorage(opened: OpenedStore, config: Config, readiness: Readiness, logger: Logger): Promise<void> {
  if (config.server.storage_credentials_fail_ready) readiness.addCheck('storage', () => opened.health.credentialProblem());
  await opened.probe();
  const h = opened.health.view();
  if (h.state !== 'healthy') logger.error(h.state === 'failing' ? 'storage is not usable; writes are refused (503) until it works again' : 'storage does not answer; writes stay buffered and are retried', { backend: h.backend, credentials: h.credentials, state: h.state, error: h.error });
}

/** Why the cold tier cannot be used now, or null. */
function coldProblem(cold: OpenedStore): string | null {
  const v = cold.health.view();
  return v.state === 'healthy' ? null : `cold tier ${v.location ?? v.backend} is ${v.state}: ${v.error ?? 'no answer'}`;
}

/** ingest.max_buffered_size, where empty (0) means an eighth of the machine's memory, at most 2 GiB. */
function maxBufferedBytes(config: Config): number {
  return config.ingest.max_buffered_size || Math.min(2 * 1024 ** 3, Math.floor(totalmem() / 8));
}

/** server.max_inflight_body_size, where empty (0) means a quarter of the machine's memory. */
function inflightBodyLimit(config: Config): number {
  return config.server.max_inflight_body_size || Math.floor(totalmem() / 4);
}

/** Whether a token exists and is an admin (governance checks policy targets against it). */
function tokenOf(tokens: TokenService, id: string): { isAdmin: boolean } | null {
  return tokens.list().find((t) => t.id === id) ?? null;
}

/**
 * The time-series token of the memory service: memory.svc_token for a remote service (or with auth
 * off); in process, a dedicated non-admin service token `memory-service` issued afresh at every start.
 */
function memoryServiceToken(config: Config, tokens: TokenService): string {
  if (config.memory.svc_url || !config.auth.enabled) return config.memory.svc_token;
  // A service token: it reaches the system databases only. 'delete' lets a memory purge rewrite the
  // files holding the memory (POST /api/v1/delete), which delete.enabled does not guard for it.
  return tokens.issueServiceToken('memory-service', 'used by the in-process memory service', ['read', 'write', 'delete']);
}

async function serve(args: ParsedArgs): Promise<number> {
  const loaded = loadConfig({ explicitPath: typeof args.flags.config === 'string' ? args.flags.config : undefined });
  // Before anything is opened: on success this process image is replaced and serve starts again.
  const kept = loaded.config.server.retain_freed_memory ? restartWithEnv(RETAIN_FREED_MEMORY) : null;
  if (kept) process.stderr.write(`svc: warning: server.retain_freed_memory: ${kept}\n`);
  for (const w of loaded.warnings) process.stderr.write(`svc: warning: ${w}\n`);
  const running = await startServices(loaded.config, process.env, { configPath: loaded.path });
  const done = new Promise<number>((resolve) => {
    const onSignal = (sig: string) => void running.stop(`received ${sig}`).then(() => resolve(0));
    process.once('SIGTERM', () => onSignal('SIGTERM'));
    process.once('SIGINT', () => onSignal('SIGINT'));
  });
  return done;
}

/** Runs the command line; resolves to the process exit code. */
export async function run(argv: string[]): Promise<number> {
  let args: ParsedArgs;
  try {
    args = parseCommandLine(argv);
  } catch (err) {
    process.stderr.write(`svc: ${messageOf(err)}\n${USAGE}\n`);
    return 2;
  }
  try {
    switch (args.command) {
      case 'version':
        process.stdout.write(`svc ${VERSION}\n`);
        return 0;
      case 'help':
        process.stdout.write(USAGE + '\n');
        return 0;
      case 'token': {
        const { config } = loadConfig({ explicitPath: typeof args.flags.config === 'string' ? args.flags.config : undefined });
        return runTokenCommand(args, config);
      }
      case 'backup':
        return await runBackupCommand(args);
      case 'import':
        return await runImportCommand(args);
      case 'query':
        return await runQueryCommand(args);
      case 'export':
        return await runExportCommand(args);
      case 'write':
        return await runWriteCommand(args);
      case 'completion':
        return runCompletionCommand(args);
      case 'mcp':
        return await runMcpCommand(args);
      case 'serve':
        return await serve(args);
    }
  } catch (err) {
    // Startup problems are one clear line and exit code 2; anything else is a crash.
    if (err instanceof ConfigError || err instanceof StartupError || (err instanceof AppError && err.kind === 'invalid')) {
      process.stderr.write(`svc: ${messageOf(err)}\n`);
      return 2;
    }
    if ((err as { code?: string }).code === 'EADDRINUSE') {
      process.stderr.write(`svc: cannot listen: ${messageOf(err)}\n`);
      return 1;
    }
    process.stderr.write(`svc: fatal: ${messageOf(err)}\n${(err as Error).stack ?? ''}\n`);
    return 1;
  }
}

if (import.meta.main) {
  process.exit(await run(process.argv.slice(2)));
}

/**
 * Composition root: load config, build every module through constructor arguments, start the
 * listeners, and stop in reverse order on SIGINT/SIGTERM (HTTP first, buffers flushed last).
 */
import type { Server } from 'bun';
import {
  BackupService,
  CompactionService,
  CompactionStore,
  ImportService,
  MeasurementLocks,
  checkCron,
  compactionSettings,
  createLifecycle,
  createMqttService,
  hasRowsIn,
  recoverCompactions,
  secretKeyPath,
} from './admin/index.ts';
import { TokenService, TokenStore } from './auth/index.ts';
import { BufferSet, WriteService, reconcileManifest } from './buffer/index.ts';
import { DatabaseStore, FileManifestStore, migrations, openCatalog, type CatalogDb } from './catalog/index.ts';
import {
  USAGE,
  announceBootstrapToken,
  announceMemoryKey,
  parseCommandLine,
  runBackupCommand,
  runImportCommand,
  runMcpCommand,
  runTokenCommand,
  type ParsedArgs,
} from './cli/index.ts';
import { ConfigError, loadConfig, type Config } from './config/index.ts';
import { ConnectionPool, DuckDBInstance, createSandboxedInstance, nativeResultsEnabled, selfCheck } from './duckdb/index.ts';
import {
  backupRoutes,
  compactionRoutes,
  continuousQueryRoutes,
  createApp,
  databaseRoutes,
  deleteRoutes,
  importRoutes,
  lineProtocolWriteRoutes,
  listen,
  logsRoutes,
  metricsRoutes,
  mqttRoutes,
  msgpackWriteRoutes,
  queryRoutes,
  retentionRoutes,
  walRoutes,
} from './http/index.ts';
import { messageOf } from './lib/errors.ts';
import { Readiness } from './lib/readiness.ts';
import { VERSION } from './lib/version.ts';
import { createMemoryService, svcFetch } from './memory/index.ts';
import { Logger, createSvcMetrics, memoryDetail, startDiagnostics, startMetricsRuntime } from './observability/index.ts';
import { ManifestTableSource, QueryService } from './query/index.ts';
import { FileReaper, meteredStore, openObjectStore, type OpenedStore } from './storage/index.ts';
import { openWal, type WalTicket } from './wal/index.ts';

/** A running server: its listeners and the way to stop it. */
export interface RunningServices {
  config: Config;
  ports: { timeseries: number; memory: number | null };
  stop(reason?: string): Promise<void>;
}

/** Builds and starts every part of the server from a loaded config. */
export async function startServices(config: Config, env: Record<string, string | undefined> = process.env, opts: { configPath?: string | null } = {}): Promise<RunningServices> {
  const logger = new Logger({ level: config.log.level, format: config.log.format, bufferSize: config.log.buffer_size });
  const metrics = createSvcMetrics();
  const readiness = new Readiness();
  // GC counter, once-per-second gauges (owners add theirs with observed.sampler.add) and metrics history.
  const observed = startMetricsRuntime(metrics, config.metrics, logger);

  const catalog: CatalogDb = openCatalog(config.auth.db_path, migrations);
  const tokens = new TokenService(new TokenStore(catalog), { cacheTtlSec: config.auth.cache_ttl, maxCacheSize: config.auth.max_cache_size });
  if (config.auth.enabled) announceBootstrapToken(tokens.bootstrap(env.SVC_AUTH_BOOTSTRAP_TOKEN));

  await selfCheck();
  // Sets up in-place result reading now (a few ms of compiling) rather than in the first query.
  const resultsInPlace = nativeResultsEnabled();

  // Write path: storage, manifest check, buffers + flush workers (own DuckDB instance), write service.
  // A remote store's read cache never evicts a file a running query holds (the reaper's leases).
  let leases: FileReaper | null = null;
  const opened = await openObjectStore(config.storage, { inUse: (key) => leases?.inUse(key) ?? false });
  const store = meteredStore(opened.store, metrics);
  await watchStorage(opened, config, readiness, logger);
  const manifest = new FileManifestStore(catalog);
  // Interrupted compactions are settled first: the reaper and the rebuild below must see their outcome.
  const compactionConf = compactionSettings(config);
  if (compactionConf.enabled) for (const k of ['hourly_schedule', 'daily_schedule'] as const) checkCron(`compaction.${k}`, config.compaction[k]);
  await recoverCompactions({ jobs: new CompactionStore(catalog), manifest, store, metrics, logger, tempDirectory: compactionConf.tempDirectory });
  // Files replaced before a crash are deleted before the rebuild, which would otherwise take them back.
  const reaper = new FileReaper({ store, manifest, logger });
  leases = reaper;
  await reaper.collect();
  const writeDuck = await DuckDBInstance.create(':memory:');
  const reconcileConn = await writeDuck.connect();
  // An unreachable object store must not keep the server down (writes buffer, /health tells why).
  await reconcileManifest({ store, manifest, conn: reconcileConn, logger }).catch((err) =>
    logger.error('cannot reconcile the file manifest with storage; files it does not list stay unknown until a restart', { error: messageOf(err) }),
  );
  reconcileConn.closeSync();
  // The WAL opens before the buffers (they release its tickets); its files are replayed before /ready.
  const wal = await openWal(config.wal, metrics, logger);
  const i = config.ingest;
  const buffers = await BufferSet.create(
    { instance: writeDuck, store, manifest, metrics, logger, onRelease: (ticket) => wal.release(ticket as WalTicket) },
    {
      maxBufferSize: i.max_buffer_size,
      maxBufferAgeMs: i.max_buffer_age_ms,
      flushWorkers: i.flush_workers,
      flushQueueSize: i.flush_queue_size,
      compression: i.compression,
      admissionTimeoutMs: Math.min(10_000, config.server.write_timeout / 2),
    },
  );
  observed.sampler.add(metrics.bufferRecords, () => buffers.bufferedRecords());
  // One lock set per process: delete, retention, CQ replace, database drop and compaction take it per measurement.
  const locks = new MeasurementLocks();
  const compaction = new CompactionService({
    settings: compactionConf, catalog, manifest, store, reaper, metrics, logger, env, locks,
    unflushed: (database, measurement, from, to) => hasRowsIn(buffers.snapshot(database, measurement), from, to),
  });
  const backups = new BackupService({
    enabled: config.backup.enabled, root: config.backup.local_path, store, manifest, reaper, catalog, logger,
    flushAll: () => buffers.flushAll(),
    dbPath: config.auth.db_path,
    configPath: opts.configPath ?? null,
    secretKeyPath: config.mqtt.encryption_key ? null : secretKeyPath(config.auth.db_path),
    // The in-process memory service's token exists only in this process's database; a restore keeps it.
    keep: [{ table: 'tokens', where: "name = 'memory-service'" }],
    onMetadataRestored: () => void tokens.invalidateCache(),
  });
  // One DatabaseStore for the whole process: it caches known names, so a second instance would go stale.
  const databases = new DatabaseStore(catalog);
  const writes = new WriteService({ buffers, databases, metrics, wal: wal.enabled ? wal : null });
  const writeDeps = { writes, buffers, metrics, maxPayloadBytes: config.server.max_payload_size };
  // Query engine: its own sandboxed DuckDB instance that may read only the storage root.
  const querySource = new ManifestTableSource(manifest, opened.readRoot, buffers, databases, { store, reaper });
  const queryDuck = await createSandboxedInstance({
    allowedDirectories: [querySource.root],
    memoryLimitBytes: config.database.memory_limit || undefined,
    threads: config.database.threads || undefined,
  });
  const queryPool = new ConnectionPool(queryDuck, config.query.max_concurrent || navigator.hardwareConcurrency || 4);
  const queries = new QueryService(queryPool, querySource, { timeoutMs: config.query.timeout, slowQueryMs: config.query.slow_query_threshold_ms }, metrics, logger);
  // Databases, delete, retention, continuous queries: one row remover, one scheduler (armed after WAL replay).
  const lifecycle = await createLifecycle({
    config, catalog, manifest, store, reaper, buffers, databases, queries, root: querySource.root, logger, locks,
    write: (database, batches) => writes.write(database, batches),
  });
  // MQTT subscriptions write through the same path as the HTTP routes (names, database, WAL, buffer).
  const mqtt = createMqttService({ catalog, config, logger, write: async (database, batches) => void (await writes.write(database, batches)) });
  // Bulk imports stage on a DuckDB instance of their own (file access on, every core), never on the sandboxed query one.
  const imports = new ImportService({ store, manifest, databases, buffers, writes, metrics, logger, compression: i.compression });

  const app = createApp({
    config,
    logger,
    metrics,
    tokens,
    readiness,
    storageHealth: () => ({ hot: opened.health.view() }),
    routers: [
      ['/api/v1/write/msgpack', msgpackWriteRoutes(writeDeps)],
      ['/', lineProtocolWriteRoutes({ ...writeDeps, flushTimeoutMs: config.server.write_timeout })],
      ['/', importRoutes({ imports, writes, metrics, maxPayloadBytes: config.server.max_payload_size })],
      ['/', metricsRoutes({ metrics, history: observed.history, memory: () => memoryDetail(observed.gc.figures(), metrics.goroutines.value(), readiness.startedAt) })],
      ['/api/v1/logs', logsRoutes(logger)],
      ['/api/v1/mqtt', mqttRoutes(mqtt)],
      ['/api/wal', walRoutes(wal)],
      ['/api/v1/compaction', compactionRoutes(compaction)],
      ['/api/v1/backup', backupRoutes(backups)],
      ['/api/v1/databases', databaseRoutes(lifecycle.databases)],
      ['/api/v1/delete', deleteRoutes(lifecycle.deletes)],
      ['/api/v1/retention', retentionRoutes(lifecycle.retention)],
      ['/api/v1/continuous_queries', continuousQueryRoutes(lifecycle.continuousQueries)],
      ['/api/v1/continuous-queries', continuousQueryRoutes(lifecycle.continuousQueries)],
      ['/api/v1', queryRoutes(queries)],
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
  const tsServer = listen(app.fetch, { ...listenBase, host: config.server.host, port: config.server.port });
  servers.push(tsServer);
  // In-flight work on every listener: svc_goroutines and the diagnostics goroutine view.
  const activity = () => ({
    http_requests: servers.reduce((n, s) => n + s.pendingRequests, 0),
    websockets: servers.reduce((n, s) => n + s.pendingWebSockets, 0),
  });
  metrics.goroutines.collectFrom(() => Object.values(activity()).reduce((a, b) => a + b, 0));

  let memoryPort: number | null = null;
  let closeMemory = () => {};
  if (config.memory.enabled) {
    const memoryApp = createMemoryService({
      config: config.memory,
      logger: logger.child({ service: 'memory' }),
      svc: svcFetch({ url: config.memory.svc_url, token: memoryServiceToken(config, tokens), local: async (req) => app.fetch(req) }),
    });
    closeMemory = memoryApp.close;
    announceMemoryKey(memoryApp.bootstrapKey);
    const memServer = listen(memoryApp.fetch, { ...listenBase, host: config.memory.host, port: config.memory.port });
    servers.push(memServer);
    memoryPort = memServer.port ?? null;
  }

  const diagnostics = startDiagnostics(env, { logger, activity });
  // Replayed rows are buffered with their old entry's ticket; that file stays until they are flushed.
  await wal.replay(async (database, batches, ticket) => {
    // Backpressure, not failure: replay waits for flush-queue room as long as it takes.
    while (!(await buffers.waitForRoom().then(() => true, () => false))) await Bun.sleep(100);
    buffers.append(database, batches, ticket);
  });
  // auto_start subscriptions come back once recovery is done; connecting happens in the background.
  await mqtt.startAll();
  compaction.start();
  lifecycle.start();
  readiness.phase = 'ready';
  logger.info('svc started', { version: VERSION, timeseries_port: tsServer.port, memory_port: memoryPort, tls: config.server.tls_enabled, query_results: resultsInPlace ? 'read in place' : 'copied through node-api' });

  let stopping: Promise<void> | null = null;
  const stop = (reason = 'stop requested') =>
    (stopping ??= (async () => {
      readiness.phase = 'stopping';
      logger.info('svc stopping', { reason });
      diagnostics?.stop();
      const work = (async () => {
        // HTTP first: no new work is accepted while the rest drains.
        await Promise.all(servers.map((s) => s.stop()));
        // MQTT clients next: the message in hand is written, then nothing more enters the buffers.
        await mqtt.stopAll();
        // Schedules stop; a merge in progress finishes (an interrupted one would be settled at start anyway).
        await compaction.stop();
        await lifecycle.stop();
        queryPool.close();
        // Then every acknowledged row goes to Parquet before the catalog closes.
        await buffers.stop();
        await wal.close();
        await imports.stop();
        writeDuck.closeSync();
        catalog.close();
        opened.close();
        closeMemory();
        observed.stop();
      })();
      const timedOut = await Promise.race([work.then(() => false), Bun.sleep(config.server.shutdown_timeout).then(() => true)]);
      if (timedOut) logger.error('shutdown timed out; unfinished work abandoned', { timeout_ms: config.server.shutdown_timeout });
      else logger.info('svc stopped');
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
  if (h.state !== 'healthy') logger.error('storage is not usable; writes stay buffered and are retried', { backend: h.backend, credentials: h.credentials, state: h.state, error: h.error });
}

/**
 * The time-series token of the memory service: memory.svc_token for a remote service (or with auth
 * off); in process, a dedicated non-admin token `memory-service` issued afresh at every start.
 */
function memoryServiceToken(config: Config, tokens: TokenService): string {
  if (config.memory.svc_url || !config.auth.enabled) return config.memory.svc_token;
  // 'delete' lets a memory purge rewrite the files holding the memory (POST /api/v1/delete, still gated by delete.enabled).
  return tokens.issueServiceToken('memory-service', 'used by the in-process memory service', ['read', 'write', 'delete']);
}

async function serve(args: ParsedArgs): Promise<number> {
  const loaded = loadConfig({ explicitPath: typeof args.flags.config === 'string' ? args.flags.config : undefined });
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
      case 'mcp':
        return await runMcpCommand(args);
      case 'serve':
        return await serve(args);
    }
  } catch (err) {
    // Startup problems are one clear line and exit code 2; anything else is a crash.
    if (err instanceof ConfigError || (err as { kind?: string }).kind === 'invalid' || /^cannot start/.test(messageOf(err))) {
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

/**
 * Composition root: load config, build every module through constructor arguments, start the
 * listeners, and stop in reverse order on SIGINT/SIGTERM (HTTP first, buffers flushed last).
 */
import type { Server } from 'bun';
import { createMqttService } from './admin/index.ts';
import { TokenService, TokenStore } from './auth/index.ts';
import { USAGE, parseCommandLine, runTokenCommand, type ParsedArgs } from './cli/index.ts';
import { BufferSet, WriteService, reconcileManifest } from './buffer/index.ts';
import { DatabaseStore, FileManifestStore, migrations, openCatalog, type CatalogDb } from './catalog/index.ts';
import { ConfigError, loadConfig, type Config } from './config/index.ts';
import { DuckDBInstance, selfCheck } from './duckdb/index.ts';
import { createApp, lineProtocolWriteRoutes, listen, logsRoutes, metricsRoutes, mqttRoutes, msgpackWriteRoutes, walRoutes } from './http/index.ts';
import { messageOf } from './lib/errors.ts';
import { Readiness } from './lib/readiness.ts';
import { VERSION } from './lib/version.ts';
import { createMemoryService, svcFetch } from './memory/index.ts';
import { Logger, createSvcMetrics, memoryDetail, startDiagnostics, startMetricsRuntime } from './observability/index.ts';
import { FileReaper, LocalObjectStore, meteredStore } from './storage/index.ts';
import { openWal, type WalTicket } from './wal/index.ts';

/** A running server: its listeners and the way to stop it. */
export interface RunningServices {
  config: Config;
  ports: { timeseries: number; memory: number | null };
  stop(reason?: string): Promise<void>;
}

/** Builds and starts every part of the server from a loaded config. */
export async function startServices(config: Config, env: Record<string, string | undefined> = process.env): Promise<RunningServices> {
  const logger = new Logger({ level: config.log.level, format: config.log.format, bufferSize: config.log.buffer_size });
  const metrics = createSvcMetrics();
  const readiness = new Readiness();
  // GC counter, once-per-second gauges (owners add theirs with observed.sampler.add) and metrics history.
  const observed = startMetricsRuntime(metrics, config.metrics, logger);

  const catalog: CatalogDb = openCatalog(config.auth.db_path, migrations);
  const tokens = new TokenService(new TokenStore(catalog), { cacheTtlSec: config.auth.cache_ttl, maxCacheSize: config.auth.max_cache_size });
  if (config.auth.enabled) announceBootstrap(tokens.bootstrap(env.SVC_AUTH_BOOTSTRAP_TOKEN));

  await selfCheck();

  // Write path: storage, manifest check, buffers + flush workers (own DuckDB instance), write service.
  if (config.storage.backend !== 'local') throw new Error(`cannot start: storage backend '${config.storage.backend}' is not available yet (use local)`);
  const store = meteredStore(await new LocalObjectStore(config.storage.local_path).open(), metrics);
  const manifest = new FileManifestStore(catalog);
  // Files replaced before a crash are deleted before the rebuild, which would otherwise take them back.
  const reaper = new FileReaper({ store, manifest, logger });
  await reaper.collect();
  const writeDuck = await DuckDBInstance.create(':memory:');
  const reconcileConn = await writeDuck.connect();
  await reconcileManifest({ store, manifest, conn: reconcileConn, logger });
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
  // One DatabaseStore for the whole process: it caches known names, so a second instance would go stale.
  const databases = new DatabaseStore(catalog);
  const writes = new WriteService({ buffers, databases, metrics, wal: wal.enabled ? wal : null });
  const writeDeps = { writes, buffers, metrics, maxPayloadBytes: config.server.max_payload_size };
  // MQTT subscriptions write through the same path as the HTTP routes (names, database, WAL, buffer).
  const mqtt = createMqttService({ catalog, config, logger, write: async (database, batches) => void (await writes.write(database, batches)) });

  const app = createApp({
    config,
    logger,
    metrics,
    tokens,
    readiness,
    storageHealth: () => ({ hot: { backend: config.storage.backend, credentials: 'ok', state: 'healthy' } }),
    routers: [
      ['/api/v1/write/msgpack', msgpackWriteRoutes(writeDeps)],
      ['/', lineProtocolWriteRoutes({ ...writeDeps, flushTimeoutMs: config.server.write_timeout })],
      ['/', metricsRoutes({ metrics, history: observed.history, memory: () => memoryDetail(observed.gc.figures(), metrics.goroutines.value(), readiness.startedAt) })],
      ['/api/v1/logs', logsRoutes(logger)],
      ['/api/v1/mqtt', mqttRoutes(mqtt)],
      ['/api/wal', walRoutes(wal)],
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
  readiness.phase = 'ready';
  logger.info('svc started', { version: VERSION, timeseries_port: tsServer.port, memory_port: memoryPort, tls: config.server.tls_enabled });

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
        // Then every acknowledged row goes to Parquet before the catalog closes.
        await buffers.stop();
        await wal.close();
        writeDuck.closeSync();
        catalog.close();
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
 * The time-series token of the memory service: memory.svc_token for a remote service (or with auth
 * off); in process, a dedicated non-admin token `memory-service`, rotated at every start so its
 * plaintext lives only in this process's memory.
 */
function memoryServiceToken(config: Config, tokens: TokenService): string {
  if (config.memory.svc_url || !config.auth.enabled) return config.memory.svc_token;
  const existing = tokens.list().find((t) => t.name === 'memory-service');
  if (existing?.enabled) return tokens.rotate(existing.id).token;
  if (existing) tokens.delete(existing.id);
  return tokens.create({ name: 'memory-service', description: 'used by the in-process memory service', permissions: [] }).token;
}

function announceMemoryKey(key: string | null): void {
  if (key)
    process.stderr.write(
      `\n=== svc memory service: initial admin API key (shown once; store it now) ===\n${key}\n` +
        `=== use it as: x-api-key: <key> ===\n\n`,
    );
}

function announceBootstrap(result: { created: boolean; token: string | null }): void {
  if (!result.created) return;
  if (result.token)
    process.stderr.write(
      `\n=== svc: initial admin token (shown once; store it now) ===\n${result.token}\n` +
        `=== use it as: Authorization: Bearer <token> ===\n\n`,
    );
  else process.stderr.write('svc: initial admin token created from SVC_AUTH_BOOTSTRAP_TOKEN\n');
}

async function serve(args: ParsedArgs): Promise<number> {
  const loaded = loadConfig({ explicitPath: typeof args.flags.config === 'string' ? args.flags.config : undefined });
  for (const w of loaded.warnings) process.stderr.write(`svc: warning: ${w}\n`);
  const running = await startServices(loaded.config);
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

/**
 * Composition root: load config, build every module through constructor arguments, start the
 * listeners, and stop in reverse order on SIGINT/SIGTERM (HTTP first, buffers flushed last).
 */
import type { Server } from 'bun';
import { TokenService, TokenStore } from './auth/index.ts';
import { USAGE, parseCommandLine, runTokenCommand, type ParsedArgs } from './cli/index.ts';
import { migrations, openCatalog, type CatalogDb } from './catalog/index.ts';
import { ConfigError, loadConfig, type Config } from './config/index.ts';
import { selfCheck } from './duckdb/index.ts';
import { createApp, listen } from './http/index.ts';
import { messageOf } from './lib/errors.ts';
import { Readiness } from './lib/readiness.ts';
import { VERSION } from './lib/version.ts';
import { createMemoryApp, svcFetch } from './memory/index.ts';
import { Logger, createSvcMetrics } from './observability/index.ts';

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

  const catalog: CatalogDb = openCatalog(config.auth.db_path, migrations);
  const tokens = new TokenService(new TokenStore(catalog), { cacheTtlSec: config.auth.cache_ttl, maxCacheSize: config.auth.max_cache_size });
  if (config.auth.enabled) announceBootstrap(tokens.bootstrap(env.SVC_AUTH_BOOTSTRAP_TOKEN));

  await selfCheck();

  const app = createApp({
    config,
    logger,
    metrics,
    tokens,
    readiness,
    storageHealth: () => ({ hot: { backend: config.storage.backend, credentials: 'ok', state: 'healthy' } }),
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

  let memoryPort: number | null = null;
  if (config.memory.enabled) {
    const memoryApp = createMemoryApp({
      svc: svcFetch({ url: config.memory.svc_url, token: config.memory.svc_token, local: async (req) => app.fetch(req) }),
    });
    const memServer = listen(memoryApp.fetch, { ...listenBase, host: config.memory.host, port: config.memory.port });
    servers.push(memServer);
    memoryPort = memServer.port ?? null;
  }

  readiness.phase = 'ready';
  logger.info('svc started', { version: VERSION, timeseries_port: tsServer.port, memory_port: memoryPort, tls: config.server.tls_enabled });

  let stopping: Promise<void> | null = null;
  const stop = (reason = 'stop requested') =>
    (stopping ??= (async () => {
      readiness.phase = 'stopping';
      logger.info('svc stopping', { reason });
      const work = (async () => {
        // HTTP first: no new work is accepted while the rest drains.
        await Promise.all(servers.map((s) => s.stop()));
        catalog.close();
      })();
      const timedOut = await Promise.race([work.then(() => false), Bun.sleep(config.server.shutdown_timeout).then(() => true)]);
      if (timedOut) logger.error('shutdown timed out; unfinished work abandoned', { timeout_ms: config.server.shutdown_timeout });
      else logger.info('svc stopped');
    })());

  return { config, ports: { timeseries: tsServer.port ?? config.server.port, memory: memoryPort }, stop };
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

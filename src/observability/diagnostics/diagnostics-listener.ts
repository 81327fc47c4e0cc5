import type { Server } from 'bun';
import type { Logger } from '../logger.ts';
import { planDiagnostics } from './diagnostics-config.ts';
import { pprofHandler, type PprofDeps } from './pprof-handler.ts';

/** A running diagnostics listener. */
export interface DiagnosticsListener {
  /** The bound address, `host:port` (the real port when 0 was asked for). */
  addr: string;
  /** Closes the listener at once, dropping any profile in progress. */
  stop(): void;
}

/**
 * Starts the profiling listener when the environment asks for it (see planDiagnostics). Never throws:
 * a refused address, a port already in use or any other failure is logged and the service carries on
 * without the listener (null).
 */
export function startDiagnostics(env: Record<string, string | undefined>, deps: PprofDeps): DiagnosticsListener | null {
  const log = deps.logger.child({ component: 'diagnostics' });
  const plan = planDiagnostics(env);
  if (plan.kind === 'off') return null;
  if (plan.kind === 'refused') {
    log.error('diagnostics listener refused', { addr: plan.addr, reason: plan.reason });
    return null;
  }
  let server: Server<undefined>;
  try {
    // Profiles can take minutes (a CPU profile of up to 300 s): no idle timeout.
    server = Bun.serve({ hostname: plan.host, port: plan.port, idleTimeout: 0, development: false, fetch: pprofHandler({ ...deps, logger: log }) });
  } catch (err) {
    const code = (err as { code?: string }).code;
    const reason = code === 'EADDRINUSE' ? 'address already in use' : (err as Error).message;
    log.error('diagnostics listener not started', { addr: plan.addr, reason });
    return null;
  }
  const host = plan.host.includes(':') ? `[${plan.host}]` : plan.host;
  const addr = `${host}:${server.port}`;
  log.warn('diagnostics listener started', { addr, routes: '/debug/pprof/' });
  return { addr, stop: () => void server.stop(true) };
}

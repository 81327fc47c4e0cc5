/** Default address of the diagnostics listener: loopback only. */
export const DEFAULT_DIAGNOSTICS_ADDR = '127.0.0.1:6060';

const TRUTHY = new Set(['1', 'true', 'yes', 'on']);

/** True for the spec's switch values `1`, `true`, `yes`, `on` (any case, surrounding spaces ignored). */
export function isTruthy(value: string | undefined): boolean {
  return value !== undefined && TRUTHY.has(value.trim().toLowerCase());
}

/** What the environment asks of the diagnostics listener. */
export type DiagnosticsPlan =
  | { kind: 'off' }
  | { kind: 'listen'; host: string; port: number; addr: string }
  | { kind: 'refused'; addr: string; reason: string };

/**
 * Splits `host:port`, `[v6]:port` or `:port` (all interfaces, as Go's listeners read it).
 * Null when the port is missing or not 0-65535.
 */
export function parseListenAddr(addr: string): { host: string; port: number } | null {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d{1,5})$/.exec(addr.trim());
  if (!m) return null;
  const port = Number(m[3]);
  if (port > 65535) return null;
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}

/** True for 127.0.0.0/8, ::1 (also IPv4-mapped) and `localhost`; names are not resolved, so any other name is not loopback. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  const parts = v4.split('.');
  return parts.length === 4 && parts[0] === '127' && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

/**
 * Reads SVC_DEBUG_PPROF, SVC_DEBUG_PPROF_ADDR and SVC_DEBUG_PPROF_ALLOW_NON_LOOPBACK: off unless the switch is
 * truthy; a malformed address, or a non-loopback one without the explicit allowance, is refused with a reason.
 */
export function planDiagnostics(env: Record<string, string | undefined>): DiagnosticsPlan {
  if (!isTruthy(env.SVC_DEBUG_PPROF)) return { kind: 'off' };
  const addr = env.SVC_DEBUG_PPROF_ADDR?.trim() || DEFAULT_DIAGNOSTICS_ADDR;
  const parsed = parseListenAddr(addr);
  if (!parsed) return { kind: 'refused', addr, reason: 'SVC_DEBUG_PPROF_ADDR must be host:port, [v6-address]:port or :port' };
  if (!isLoopbackHost(parsed.host) && !isTruthy(env.SVC_DEBUG_PPROF_ALLOW_NON_LOOPBACK))
    return {
      kind: 'refused',
      addr,
      reason: 'the address is not loopback; set SVC_DEBUG_PPROF_ALLOW_NON_LOOPBACK=true to expose profiles beyond this machine',
    };
  return { kind: 'listen', addr, ...parsed };
}

import { StartupError } from '../lib/errors.ts';
import { existsSync } from 'node:fs';
import type { Server } from 'bun';

/** How to listen: address, TLS material and limits. */
export interface ListenOptions {
  host: string;
  port: number;
  tls?: { certFile: string; keyFile: string };
  /** Bun refuses larger bodies outright; the app's own 413 check is tighter and clearer. */
  maxBodyBytes: number;
  /** Seconds a connection may stay silent; 0 disables (needed when queries may run longer than Bun's 255 s cap). */
  idleTimeoutSec: number;
}

/** Starts Bun's HTTP(S) server for a fetch handler. Throws with a clear message when TLS files are missing. */
export function listen(fetch: (req: Request, server: Server<undefined>) => Response | Promise<Response>, o: ListenOptions): Server<undefined> {
  let tls: { cert: ReturnType<typeof Bun.file>; key: ReturnType<typeof Bun.file> } | undefined;
  if (o.tls) {
    for (const [what, f] of [['server.tls_cert_file', o.tls.certFile], ['server.tls_key_file', o.tls.keyFile]] as const)
      if (!f || !existsSync(f)) throw new StartupError('tls', `TLS: ${what} '${f}' does not exist`);
    tls = { cert: Bun.file(o.tls.certFile), key: Bun.file(o.tls.keyFile) };
  }
  return Bun.serve({
    hostname: o.host,
    port: o.port,
    fetch,
    tls,
    maxRequestBodySize: o.maxBodyBytes,
    idleTimeout: o.idleTimeoutSec > 255 ? 0 : o.idleTimeoutSec,
    development: false,
  });
}

/**
 * The Postgres wire listener: one PgSession per connection, bytes cut into messages by FrameReader.
 * node:net rather than Bun.listen, because a Postgres connection starts in plain TCP and switches to
 * TLS after an SSLRequest, and only node:tls' TLSSocket can take over an accepted socket as a server.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { createSecureContext, TLSSocket, type SecureContext } from 'node:tls';
import { readFileSync } from 'node:fs';
import type { SvcMetrics } from '../observability/index.ts';
import { FrameReader, MAX_MESSAGE_BYTES } from './messages.ts';
import { PgSession, type SessionDeps } from './session.ts';

/** Settings of the listener ([pgwire], TLS from [server]). */
export interface PgWireOptions {
  host: string;
  port: number;
  /** PEM files of the server's certificate: SSLRequest is accepted and cleartext token logins allowed over it. */
  tls?: { certFile: string; keyFile: string };
  /** pgwire.login_timeout in ms (0: none): a connection not logged in by then gets FATAL 57P05 and is closed. */
  loginTimeoutMs: number;
  /** pgwire.max_connections: one more is refused with FATAL 53300. */
  maxConnections: number;
  metrics: Pick<SvcMetrics, 'pgwireConnections' | 'pgwireRefused' | 'pgwireLoginTimeouts'>;
}

/** Starts listening; resolves once bound. stop() closes the listener and every connection. */
export async function startPgWire(opts: PgWireOptions, deps: Omit<SessionDeps, 'cancels' | 'clientIp'>): Promise<{ port: number; stop(): void }> {
  const cancels: SessionDeps['cancels'] = new Map();
  const secure: SecureContext | null = opts.tls ? createSecureContext({ cert: readFileSync(opts.tls.certFile), key: readFileSync(opts.tls.keyFile) }) : null;
  const open = new Set<Socket>();
  // Connections counted against max_connections; refused ones live only until their startup packet
  // is answered or the login timeout closes them.
  const admitted = new Set<Socket>();
  opts.metrics.pgwireConnections.collectFrom(() => admitted.size);
  const server: Server = createServer((raw) => {
    open.add(raw);
    const refused = admitted.size >= opts.maxConnections;
    if (refused) opts.metrics.pgwireRefused.inc();
    else admitted.add(raw);
    raw.on('close', () => {
      open.delete(raw);
      admitted.delete(raw);
    });
    let socket: Socket = raw;
    const frames = new FrameReader();
    const onData = (data: Buffer) => {
      try {
        if (session.loggedIn) frames.limit = MAX_MESSAGE_BYTES;
        session.receive(frames.push(data));
      } catch (err) {
        deps.logger?.warn('pgwire protocol error', { error: (err as Error).message });
        socket.destroy();
      }
    };
    const startTls = secure
      ? () => {
          raw.removeListener('data', onData);
          const tls = new TLSSocket(raw, { isServer: true, secureContext: secure });
          tls.on('data', onData);
          tls.on('error', (err) => deps.logger?.warn('pgwire TLS error', { error: err.message }));
          socket = tls;
        }
      : null;
    // end() alone leaves a socket half open for as long as the peer keeps its side open: destroyed once flushed.
    let ending = false;
    const close = () => {
      ending = true;
      socket.end(() => socket.destroy());
    };
    const session = new PgSession({ ...deps, cancels, clientIp: raw.remoteAddress ?? null }, (b) => void socket.write(b), close, startTls);
    if (refused) session.refuse();
    const loginTimer = opts.loginTimeoutMs > 0 ? setTimeout(() => !ending && session.loginTimedOut(opts.loginTimeoutMs) && opts.metrics.pgwireLoginTimeouts.inc(), opts.loginTimeoutMs) : null;
    raw.on('data', onData);
    raw.on('close', () => {
      if (loginTimer) clearTimeout(loginTimer);
      session.closed();
    });
    raw.on('error', (err) => deps.logger?.debug?.('pgwire socket error', { error: err.message }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : opts.port,
    stop: () => {
      server.close();
      for (const s of open) s.destroy();
    },
  };
}

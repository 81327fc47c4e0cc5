/**
 * The Postgres wire listener: one PgSession per connection, bytes cut into messages by FrameReader.
 * node:net rather than Bun.listen, because a Postgres connection starts in plain TCP and switches to
 * TLS after an SSLRequest, and only node:tls' TLSSocket can take over an accepted socket as a server.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { createSecureContext, TLSSocket, type SecureContext } from 'node:tls';
import { readFileSync } from 'node:fs';
import { FrameReader, MAX_MESSAGE_BYTES } from './messages.ts';
import { PgSession, type SessionDeps } from './session.ts';

/** Settings of the listener ([pgwire], TLS from [server]). */
export interface PgWireOptions {
  host: string;
  port: number;
  /** PEM files of the server's certificate: SSLRequest is accepted and cleartext token logins allowed over it. */
  tls?: { certFile: string; keyFile: string };
}

/** Starts listening; resolves once bound. stop() closes the listener and every connection. */
export async function startPgWire(opts: PgWireOptions, deps: Omit<SessionDeps, 'cancels' | 'clientIp'>): Promise<{ port: number; stop(): void }> {
  const cancels: SessionDeps['cancels'] = new Map();
  const secure: SecureContext | null = opts.tls ? createSecureContext({ cert: readFileSync(opts.tls.certFile), key: readFileSync(opts.tls.keyFile) }) : null;
  const open = new Set<Socket>();
  const server: Server = createServer((raw) => {
    open.add(raw);
    raw.on('close', () => open.delete(raw));
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
    const session = new PgSession({ ...deps, cancels, clientIp: raw.remoteAddress ?? null }, (b) => void socket.write(b), () => void socket.end(), startTls);
    raw.on('data', onData);
    raw.on('close', () => session.closed());
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

/**
 * The Postgres wire listener (Bun.listen): one PgSession per connection, bytes cut into messages
 * by FrameReader, writes queued while the socket is full. Plain TCP: an SSLRequest is answered 'N'.
 */
import type { Socket, TCPSocketListener } from 'bun';
import { FrameReader } from './messages.ts';
import { PgSession, type SessionDeps } from './session.ts';

interface Conn {
  frames: FrameReader;
  session: PgSession;
  pending: Uint8Array[];
}

/** Settings of the listener ([pgwire]). */
export interface PgWireOptions {
  host: string;
  port: number;
}

/** Starts listening; stop() closes the listener and every connection. */
export function startPgWire(opts: PgWireOptions, deps: Omit<SessionDeps, 'cancels'>): { port: number; stop(): void } {
  const cancels: SessionDeps['cancels'] = new Map();
  const write = (socket: Socket<Conn>, bytes: Uint8Array) => {
    const c = socket.data;
    if (c.pending.length > 0) return void c.pending.push(bytes);
    const n = socket.write(bytes);
    if (n < bytes.length) c.pending.push(bytes.subarray(Math.max(0, n)));
  };
  const listener: TCPSocketListener<Conn> = Bun.listen<Conn>({
    hostname: opts.host,
    port: opts.port,
    socket: {
      open(socket) {
        socket.data = {
          frames: new FrameReader(),
          pending: [],
          session: new PgSession({ ...deps, cancels }, (b) => write(socket, b), () => socket.end(), null),
        };
      },
      data(socket, data) {
        try {
          socket.data.session.receive(socket.data.frames.push(data));
        } catch (err) {
          deps.logger?.warn('pgwire protocol error', { error: (err as Error).message });
          socket.end();
        }
      },
      drain(socket) {
        const c = socket.data;
        while (c.pending.length > 0) {
          const head = c.pending[0]!;
          const n = socket.write(head);
          if (n < head.length) {
            c.pending[0] = head.subarray(Math.max(0, n));
            return;
          }
          c.pending.shift();
        }
      },
      close(socket) {
        socket.data?.session.closed();
      },
      error(socket, err) {
        deps.logger?.warn('pgwire socket error', { error: err.message });
      },
    },
  });
  return { port: listener.port, stop: () => listener.stop(true) };
}

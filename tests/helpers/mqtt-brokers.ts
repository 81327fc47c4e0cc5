/**
 * Real MQTT brokers for the tests: aedes in this process, and Debian's mosquitto as a child process
 * when installed. Both can be stopped and started again on the same port (broker restart scenarios).
 */
import { Aedes } from 'aedes';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { WebSocketServer, createWebSocketStream } from 'ws';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt';
import type { Subprocess } from 'bun';

/** A broker the test controls. */
export interface TestBroker {
  kind: 'aedes' | 'mosquitto';
  port: number;
  url: string;
  /** Stops the broker (connections drop, sessions are lost). */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
}

/** A TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** aedes on a random port, in this process; over WebSocket (`ws://.../mqtt`) when `websocket` is set. */
export async function startAedes(opts: { authenticate?: (user: string, pass: string) => boolean; websocket?: boolean } = {}): Promise<TestBroker> {
  const port = await freePort();
  let server: Pick<Server, 'close' | 'on' | 'once' | 'listen'> | null = null;
  let broker: Aedes | null = null;
  const sockets = new Set<Socket>();
  const b: TestBroker = {
    kind: 'aedes',
    port,
    url: opts.websocket ? `ws://127.0.0.1:${port}/mqtt` : `tcp://127.0.0.1:${port}`,
    async start() {
      broker = await Aedes.createBroker();
      if (opts.authenticate) {
        const check = opts.authenticate;
        broker.authenticate = (_client, user, pass, done) => done(null, check(user ?? '', pass?.toString() ?? ''));
      }
      if (opts.websocket) {
        const http = createHttpServer();
        const b = broker;
        new WebSocketServer({ server: http }).on('connection', (ws, req) => b.handle(createWebSocketStream(ws) as never, req as never));
        server = http;
      } else server = createServer(broker.handle);
      server.on('connection', (s: Socket) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
      await new Promise<void>((resolve, reject) => (server!.once('error', reject), server!.listen(port, '127.0.0.1', () => resolve())));
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
      await new Promise<void>((r) => (broker ? broker.close(() => r()) : r()));
      server = null;
      broker = null;
    },
  };
  await b.start();
  return b;
}

/** Path of the mosquitto binary, or null when it is not installed. */
export function mosquittoPath(): string | null {
  for (const p of ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto']) if (Bun.file(p).size > 0) return p;
  return Bun.which('mosquitto');
}

/** mosquitto on a random port with a minimal config (`extraConfig` appended, e.g. TLS listener lines). */
export async function startMosquitto(extraConfig = '', portOverride?: number): Promise<TestBroker> {
  const bin = mosquittoPath();
  if (!bin) throw new Error('mosquitto is not installed');
  const port = portOverride ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'svc-mosq-'));
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, extraConfig ? extraConfig.replaceAll('$PORT', String(port)) : `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\n`);
  let proc: Subprocess | null = null;
  let log = '';
  const b: TestBroker = {
    kind: 'mosquitto',
    port,
    url: `tcp://127.0.0.1:${port}`,
    async start() {
      proc = Bun.spawn([bin, '-c', conf], { stdout: 'pipe', stderr: 'pipe' });
      void (async () => {
        for await (const chunk of proc!.stderr as ReadableStream<Uint8Array>) log += new TextDecoder().decode(chunk);
      })();
      const deadline = Date.now() + 10_000;
      for (;;) {
        const ok = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } }).then((s) => (s.end(), true), () => false);
        if (ok) return;
        if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`mosquitto did not start: ${log}`);
        await Bun.sleep(50);
      }
    },
    async stop() {
      if (proc && proc.exitCode === null) proc.kill('SIGKILL');
      await proc?.exited;
      proc = null;
    },
  };
  await b.start();
  return b;
}

/** A separate publishing client. */
export async function publisher(url: string, opts: IClientOptions = {}): Promise<MqttClient> {
  return connectAsync(url.replace(/^tcp:/, 'mqtt:').replace(/^ssl:/, 'mqtts:'), { reconnectPeriod: 0, ...opts });
}

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes (then throws with `what`). */
export async function waitFor<T>(what: string, fn: () => Promise<T> | T, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      last = await fn();
      if (last) return last as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
    await Bun.sleep(50);
  }
}

/** Files of a throwaway PKI for TLS tests: a CA, a server certificate for 127.0.0.1, a client certificate. */
export interface TestPki {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/** Creates a CA and server and client certificates with openssl; null when openssl is absent. */
export function makePki(): TestPki | null {
  const openssl = Bun.which('openssl');
  if (!openssl) return null;
  const dir = mkdtempSync(join(tmpdir(), 'svc-pki-'));
  const run = (...args: string[]) => {
    const p = Bun.spawnSync([openssl, ...args], { cwd: dir });
    if (p.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${p.stderr.toString()}`);
  };
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=svc-test-ca', '-keyout', 'ca.key', '-out', 'ca.pem');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  for (const who of ['server', 'client']) {
    run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${who === 'server' ? '127.0.0.1' : 'svc-client'}`, '-keyout', `${who}.key`, '-out', `${who}.csr`);
    run('x509', '-req', '-in', `${who}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-out', `${who}.pem`, ...(who === 'server' ? ['-extfile', 'san.ext'] : []));
  }
  const f = (n: string) => join(dir, n);
  return { dir, ca: f('ca.pem'), serverCert: f('server.pem'), serverKey: f('server.key'), clientCert: f('client.pem'), clientKey: f('client.key') };
}

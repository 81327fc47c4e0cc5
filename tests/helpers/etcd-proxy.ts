/**
 * An HTTP proxy in front of one real etcd member's JSON gateway, for one node's view of etcd: it
 * passes every request through (watch streams included) until told to refuse the range reads of a
 * key prefix for a while, answering them as a member that timed out would. That is how a loaded
 * etcd fails a node's reads at the worst moment, made to happen when a test wants it.
 */
import { Buffer } from 'node:buffer';

export interface EtcdProxy {
  url: string;
  /** Refuses `/v3/kv/range` requests whose key starts with `prefix` for the next `ms` milliseconds. */
  failRanges(prefix: string, ms: number): void;
  /** Range reads refused so far. */
  readonly refused: number;
  stop(): void;
}

export function startEtcdProxy(target: string): EtcdProxy {
  let rule: { prefix: string; until: number } | null = null;
  let refused = 0;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const body = await req.arrayBuffer();
      if (rule && Date.now() < rule.until && url.pathname === '/v3/kv/range') {
        const key = Buffer.from((JSON.parse(new TextDecoder().decode(body)) as { key?: string }).key ?? '', 'base64').toString();
        if (key.startsWith(rule.prefix)) {
          refused++;
          return Response.json({ error: 'etcdserver: request timed out', code: 14, message: 'etcdserver: request timed out' }, { status: 503 });
        }
      }
      const res = await fetch(target + url.pathname + url.search, { method: req.method, headers: req.headers, body: body.byteLength ? body : undefined, signal: req.signal });
      return new Response(res.body, { status: res.status, headers: res.headers });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    failRanges(prefix, ms) {
      rule = { prefix, until: Date.now() + ms };
    },
    get refused() {
      return refused;
    },
    stop: () => void server.stop(true),
  };
}

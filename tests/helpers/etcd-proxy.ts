/**
 * An HTTP proxy in front of one real etcd member's JSON gateway, for one node's view of etcd: it
 * passes every request through (watch streams included) until told to refuse the range reads of a
 * key prefix for a while, answering them as a member that timed out would, to lose the answer of
 * a transaction it did pass on, or to pass a transaction on only after answering it as timed out. That is how a loaded etcd fails a node's requests at the worst moment,
 * made to happen when a test wants it.
 */
import { Buffer } from 'node:buffer';

export interface EtcdProxy {
  url: string;
  /** Refuses `/v3/kv/range` requests whose key starts with `prefix` for the next `ms` milliseconds. */
  failRanges(prefix: string, ms: number): void;
  /** Passes the next `count` transactions that put a key containing `fragment` to etcd, then answers them as timed out. */
  loseTxnAnswers(fragment: string, count: number): void;
  /** For the next `ms` milliseconds, passes every transaction that puts a key containing `fragment` to etcd, then answers it as timed out. */
  loseTxnAnswersFor(fragment: string, ms: number): void;
  /** Answers the next `count` transactions that put a key containing `fragment` as timed out at once and passes each to etcd `delayMs` later: a proposal that commits after its client gave up. */
  holdTxns(fragment: string, count: number, delayMs: number): void;
  /** Whether each held transaction succeeded, as etcd answered it once passed on (in the order they landed). */
  readonly held: readonly boolean[];
  /** Transaction answers lost so far. */
  readonly lost: number;
  /** Range reads refused so far. */
  readonly refused: number;
  stop(): void;
}

export function startEtcdProxy(target: string): EtcdProxy {
  let rule: { prefix: string; until: number } | null = null;
  let refused = 0;
  let lose: { fragment: string; count: number; until?: number } | null = null;
  let hold: { fragment: string; count: number; delayMs: number } | null = null;
  let lost = 0;
  const held: boolean[] = [];
  const putsOf = (body: ArrayBuffer) =>
    ((JSON.parse(new TextDecoder().decode(body)) as { success?: { request_put?: { key: string } }[] }).success ?? []).flatMap((op) => (op.request_put ? [Buffer.from(op.request_put.key, 'base64').toString()] : []));
  const timedOut = () => Response.json({ error: 'etcdserver: request timed out', code: 14, message: 'etcdserver: request timed out' }, { status: 503 });
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
          return timedOut();
        }
      }
      const puts = url.pathname === '/v3/kv/txn' ? putsOf(body) : [];
      if (hold && hold.count > 0 && puts.some((k) => k.includes(hold!.fragment))) {
        hold.count--;
        const headers = new Headers(req.headers);
        const passOn = () => fetch(target + url.pathname, { method: 'POST', headers, body }).then((r) => r.json() as Promise<{ succeeded?: boolean }>);
        setTimeout(() => void passOn().then((r) => held.push(r.succeeded === true), () => {}), hold.delayMs);
        return timedOut();
      }
      const res = await fetch(target + url.pathname + url.search, { method: req.method, headers: req.headers, body: body.byteLength ? body : undefined, signal: req.signal });
      const losing = lose && (lose.until === undefined ? lose.count > 0 : Date.now() < lose.until);
      if (losing && puts.some((k) => k.includes(lose!.fragment))) {
        lose!.count--;
        lost++;
        await res.arrayBuffer();
        return timedOut();
      }
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
    loseTxnAnswers(fragment, count) {
      lose = { fragment, count };
    },
    loseTxnAnswersFor(fragment, ms) {
      lose = { fragment, count: 0, until: Date.now() + ms };
    },
    holdTxns(fragment, count, delayMs) {
      hold = { fragment, count, delayMs };
    },
    get lost() {
      return lost;
    },
    held,
    stop: () => void server.stop(true),
  };
}

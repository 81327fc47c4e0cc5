/**
 * Watches over the JSON gateway: one streaming POST per watch, newline-delimited JSON messages.
 * A broken stream resumes from the revision after the last one seen, on the next endpoint, so a
 * lost member or leader change loses no event. `hasleader` makes a member that lost quorum end the
 * stream instead of going silent, so we move to a member that still has a leader.
 */
import type { EtcdClient } from './etcd-client.ts';
import { b64, prefixEnd, watchMessageSchema, type WatchEvent } from './wire.ts';

export interface WatchHandlers {
  /** Events of one revision batch, in order; `revision` is the store revision they bring us to. */
  onEvents(events: WatchEvent[], revision: number): void | Promise<void>;
  /** The revision to resume from was compacted away: the caller must reload and watch again. */
  onCompacted?(compactRevision: number): void;
  /** A stream broke (it is retried); for logs and health. */
  onError?(err: Error): void;
}

/** A running watch; `close` ends it. */
export interface Watch {
  close(): void;
  /** The last revision delivered to onEvents (or the start revision - 1). */
  readonly revision: number;
}

/** Watches `key` (or every key under it with `prefix`) from `fromRevision` on. */
export function watch(client: EtcdClient, key: string, opts: { prefix?: boolean; fromRevision: number }, handlers: WatchHandlers): Watch {
  const abort = new AbortController();
  let revision = opts.fromRevision - 1;
  let endpointIndex = client.endpoints.indexOf(client.endpoint);

  const runOnce = async (endpoint: string): Promise<'compacted' | 'ended'> => {
    const res = await fetch(`${endpoint}/v3/watch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'grpc-metadata-hasleader': 'true' },
      body: JSON.stringify({ create_request: { key: b64(key), ...(opts.prefix ? { range_end: prefixEnd(key) } : {}), start_revision: String(revision + 1) } }),
      signal: abort.signal,
    });
    if (!res.ok || !res.body) throw new Error(`etcd watch on ${endpoint} answered ${res.status}`);
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of res.body) {
      pending += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl).trim();
        pending = pending.slice(nl + 1);
        if (!line) continue;
        const msg = watchMessageSchema.parse(JSON.parse(line));
        if (msg.error) throw new Error(`etcd watch failed: ${msg.error.message ?? 'unknown error'}`);
        const r = msg.result;
        if (!r) continue;
        if (r.compact_revision > 0) {
          handlers.onCompacted?.(r.compact_revision);
          return 'compacted';
        }
        if (r.canceled) throw new Error(`etcd cancelled the watch: ${r.cancel_reason ?? 'no reason given'}`);
        if (r.events.length > 0) {
          const rev = r.events[r.events.length - 1]!.kv.mod_revision;
          await handlers.onEvents(r.events, rev);
          revision = rev;
        }
      }
    }
    return 'ended';
  };

  void (async () => {
    let backoff = 50;
    while (!abort.signal.aborted) {
      const endpoint = client.endpoints[endpointIndex % client.endpoints.length]!;
      try {
        if ((await runOnce(endpoint)) === 'compacted') return;
        backoff = 50;
      } catch (err) {
        if (abort.signal.aborted) return;
        handlers.onError?.(err as Error);
        endpointIndex++;
        await Bun.sleep(backoff);
        backoff = Math.min(backoff * 2, 1000);
      }
    }
  })();

  return {
    close: () => abort.abort(),
    get revision() {
      return revision;
    },
  };
}

/**
 * The cluster's part of every request: a node cut off from etcd longer than auth.cache_ttl stops
 * trusting its cached grants (503); writes are refused (503) once the node cannot reach an etcd
 * quorum, rather than acknowledged and never registered; and a request this node's role does not
 * handle is forwarded, with the caller's own credentials, to a node that does (see
 * cluster/request-routing.ts). A forwarded request is never forwarded again.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { destinationOf, NOT_PRIMARY_HEADER, notPrimary, type ClusterNode } from '../../cluster/index.ts';
import { hmacHex, safeEqual } from '../../lib/crypto.ts';
import { unavailable } from '../../lib/errors.ts';
import type { AppEnv } from '../context.ts';
import { routeGroupOf } from './request-metrics.ts';
import { MUTATING_GROUPS } from './write-gate.ts';

export const FORWARDED_BY = 'x-svc-forwarded-by';
const SIGNATURE = 'x-svc-forward-signature';

export interface ClusterGateOptions {
  /** Signs forwarded requests; empty: forwarded requests are recognised by their header alone. */
  sharedSecret: string;
  /** auth.cache_ttl in ms. */
  authTtlMs: number;
  /** Silence from etcd after which writes are refused (a few heartbeats). */
  quorumLossMs: number;
  /** How long a write is retried while the cluster has no reachable primary writer (a failover). */
  primaryRetryMs?: number;
  /** How long a forwarded write may wait for the primary's answer (a paused primary must not hold writes for ever). */
  primaryTimeoutMs?: number;
  /**
   * Bodies up to this size with a declared length (server.max_payload_size) are held, so a write can be
   * resent to the next primary; larger or unsized ones (imports) stream to the primary once.
   */
  maxHeldBodyBytes?: number;
  /** cluster.query_gate_on_catchup: a reader behind the manifest head answers queries 503. */
  gateOnCatchup?: boolean;
}

/** 503 unless this reader's copy of the manifest has applied the cluster's last change. */
async function requireCaughtUp(n: ClusterNode): Promise<void> {
  const catchUp = n.manifestCatchUp;
  if (!catchUp) return;
  let lag: { head: number; applied: number };
  try {
    lag = await catchUp();
  } catch (err) {
    throw unavailable(`cannot confirm this reader has caught up with the cluster's file manifest (cluster.query_gate_on_catchup): etcd: ${(err as Error).message}; retry shortly`, 1);
  }
  if (lag.applied < lag.head)
    throw unavailable(`this reader has not caught up with the cluster's file manifest (applied revision ${lag.applied}, latest ${lag.head}; cluster.query_gate_on_catchup); retry shortly`, 1);
}

const signed = (secret: string, by: string, method: string, path: string) => hmacHex(secret, `${by}\n${method}\n${path}`);

/** The node that forwarded this request, when its signature holds; null for a client's request. */
function forwarder(c: Context<AppEnv>, secret: string): string | null {
  const by = c.req.header(FORWARDED_BY);
  if (!by) return null;
  if (!secret) return by;
  const url = new URL(c.req.url);
  const sig = c.req.header(SIGNATURE) ?? '';
  return safeEqual(sig, signed(secret, by, c.req.method, url.pathname + url.search)) ? by : null;
}

/** Sends the request once to `base`; `body` is the request's own stream, or its bytes when it may be sent again. */
function send(c: Context<AppEnv>, base: string, self: string, secret: string, body: ArrayBuffer | ReadableStream<Uint8Array> | null | undefined, timeoutMs?: number): Promise<Response> {
  const url = new URL(c.req.url);
  const pathAndQuery = url.pathname + url.search;
  const headers = new Headers(c.req.raw.headers);
  headers.delete('host');
  headers.set(FORWARDED_BY, self);
  if (secret) headers.set(SIGNATURE, signed(secret, self, c.req.method, pathAndQuery));
  return fetch(base + pathAndQuery, {
    method: c.req.method,
    headers,
    body,
    redirect: 'manual',
    signal: timeoutMs ? AbortSignal.any([c.req.raw.signal, AbortSignal.timeout(timeoutMs)]) : c.req.raw.signal,
    // The body goes back to the client as it came, still compressed if it was.
    decompress: false,
  } as RequestInit);
}

function relay(res: Response, self: string): Response {
  const out = new Headers(res.headers);
  out.set(FORWARDED_BY, self);
  return new Response(res.body, { status: res.status, headers: out });
}

async function forward(c: Context<AppEnv>, base: string, self: string, secret: string): Promise<Response> {
  const hasBody = c.req.method !== 'GET' && c.req.method !== 'HEAD';
  try {
    return relay(await send(c, base, self, secret, hasBody ? c.req.raw.body : undefined), self);
  } catch (err) {
    throw unavailable(`cannot forward to ${base}: ${(err as Error).message}`, 1);
  }
}

/** A connection that was never made: the request certainly did not reach the node, so it may go to another. */
const neverConnected = (err: unknown) => /ConnectionRefused|ECONNREFUSED/i.test(`${(err as { code?: string }).code ?? ''} ${(err as Error).message}`);

/**
 * Forwards to the primary writer, and again to the next primary while the write certainly was not
 * stored (no primary yet, connection refused, or the node answered that it is not the primary), for
 * at most `retryMs`: a failover or handover shows as a slower answer, not an error. The body is read
 * once, so it can be sent again.
 */
async function forwardToPrimary(c: Context<AppEnv>, n: ClusterNode, secret: string, retryMs: number, timeoutMs: number): Promise<Response> {
  const self = n.settings.nodeId;
  const body = await c.req.arrayBuffer();
  const deadline = Date.now() + retryMs;
  const noPrimary = 'no primary writer in the cluster right now';
  let why = noPrimary;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) {
      if (Date.now() >= deadline || c.req.raw.signal.aborted) break;
      await Bun.sleep(Math.min(250, 50 * attempt));
      await n.refresh().catch(() => undefined);
    }
    const base = await n.addressFor('writer');
    if (!base) {
      // The last word is what the cluster says now, not an earlier attempt's (a primary since gone).
      why = noPrimary;
      continue;
    }
    let res: Response;
    try {
      res = await send(c, base, self, secret, body, timeoutMs);
    } catch (err) {
      if (!neverConnected(err)) throw unavailable(`cannot forward to the primary writer ${base}: ${(err as Error).message}; the write may or may not be stored`, 1);
      why = `the primary writer ${base} refuses connections`;
      continue;
    }
    if (res.status === 503 && res.headers.get(NOT_PRIMARY_HEADER)) {
      await res.body?.cancel();
      why = `${base} is no longer the primary writer`;
      continue;
    }
    return relay(res, self);
  }
  throw unavailable(`${why}; retry shortly`, 1);
}

/** See the file comment; `node()` is null on a standalone server (then this does nothing). */
export function clusterGate(node: () => ClusterNode | null, opts: ClusterGateOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const n = node();
    if (!n) return next();
    const path = c.req.path;
    const group = routeGroupOf(path);
    if (group === 'health' || group === 'cluster') return next();
    const silent = n.sinceContactMs;
    if (c.get('principal') && silent > opts.authTtlMs)
      throw unavailable(`this node has not reached etcd for ${Math.round(silent / 1000)}s (longer than auth.cache_ttl) and does not trust its cached grants; retry on another node`, 1);
    const by = forwarder(c, opts.sharedSecret);
    const dest = destinationOf(n.settings.role, n.isLeader, group, c.req.method, path);
    if (dest === 'local') {
      if (c.req.method !== 'GET' && c.req.method !== 'HEAD' && MUTATING_GROUPS.has(group) && silent > opts.quorumLossMs)
        throw unavailable(`cannot reach an etcd quorum for ${Math.round(silent / 1000)}s: writes are not acknowledged until it is back`, 1);
      if (opts.gateOnCatchup && group === 'query' && n.settings.role === 'reader') await requireCaughtUp(n);
      return next();
    }
    if (by) {
      const message = `forwarded by ${by}, but this node is not the active ${dest} either; retry shortly`;
      throw dest === 'writer' ? notPrimary(message) : unavailable(message, 1);
    }
    const declared = Number(c.req.header('content-length') ?? Number.NaN);
    if (dest === 'writer' && declared <= (opts.maxHeldBodyBytes ?? 0))
      return forwardToPrimary(c, n, opts.sharedSecret, opts.primaryRetryMs ?? 3000, opts.primaryTimeoutMs ?? 10_000);
    const base = await n.addressFor(dest);
    if (!base) {
      // With no reader, a compactor answers queries itself rather than not at all.
      if (dest === 'reader') return next();
      throw unavailable(`no active ${dest} in the cluster right now; retry shortly`, 1);
    }
    return forward(c, base, n.settings.nodeId, opts.sharedSecret);
  };
}

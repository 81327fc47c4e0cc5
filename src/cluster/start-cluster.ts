/** Turns the [cluster] settings into a ClusterNode connected to etcd, refusing setups that cannot work. */
import { hostname } from 'node:os';
import { StartupError } from '../lib/errors.ts';
import { ClusterNode, connectEtcd } from './cluster-node.ts';
import type { Role } from './node-record.ts';

export interface ClusterConfig {
  enabled: boolean;
  name: string;
  node_id: string;
  role: Role;
  etcd_endpoints: string[];
  etcd_prefix: string;
  advertise_url: string;
  heartbeat_interval: number;
  failover_timeout: number;
  failover_enabled: boolean;
  failover_cooldown: number;
  wal_group_commit: number;
}

interface Log {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** How long start-up waits for etcd before giving up (exit 2). */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Checks the settings (a StartupError of kind `cluster` when they cannot work: local storage, a local
 * cold tier, no endpoints, etcd unreachable after a bounded retry) and connects to etcd. The node joins with
 * `start(advertiseUrl)` once it listens. Null when clustering is off.
 */
export async function openCluster(
  conf: ClusterConfig,
  ctx: { storageBackend: string; coldBackend?: string | null; port: number; version: string; logger: Log },
): Promise<ClusterNode | null> {
  if (!conf.enabled) return null;
  if (ctx.storageBackend === 'local') throw new StartupError('cluster', 'cluster.enabled needs shared object storage (storage.backend = s3 or azure), not local');
  // Any node reads a cold file the compactor moved: the cold tier must be shared too.
  if (ctx.coldBackend === 'local') throw new StartupError('cluster', 'cluster.enabled with tiering needs a shared cold backend (tiering.cold_backend = s3 or azure), not local');
  if (conf.wal_group_commit < 10 || conf.wal_group_commit > 1000) throw new StartupError('cluster', `cluster.wal_group_commit must be between 10ms and 1s (got ${conf.wal_group_commit}ms)`);
  const endpoints = conf.etcd_endpoints.map((e) => e.trim()).filter(Boolean);
  if (endpoints.length === 0) throw new StartupError('cluster', 'cluster.etcd_endpoints is empty');
  for (const e of endpoints) if (!/^https?:\/\/[^/]+/.test(e)) throw new StartupError('cluster', `cluster.etcd_endpoints: '${e}' is not an http(s) URL`);
  const client = await connectEtcd(endpoints, CONNECT_TIMEOUT_MS).catch((err: Error) => {
    throw new StartupError('cluster', err.message);
  });
  const nodeId = conf.node_id || `${hostname()}-${ctx.port}`;
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(nodeId)) throw new StartupError('cluster', `cluster.node_id '${nodeId}' may hold only letters, digits, '.', '_' and '-'`);
  return new ClusterNode(
    client,
    {
      name: conf.name,
      nodeId,
      role: conf.role,
      endpoints,
      prefix: conf.etcd_prefix || `/svc/v1/${conf.name}`,
      advertiseUrl: conf.advertise_url,
      version: ctx.version,
      heartbeatMs: conf.heartbeat_interval,
      failoverTimeoutMs: conf.failover_timeout,
      failoverEnabled: conf.failover_enabled,
      failoverCooldownMs: conf.failover_cooldown,
    },
    ctx.logger,
  );
}

/** The URL other nodes reach this one at when `cluster.advertise_url` is empty. */
export function defaultAdvertiseUrl(host: string, port: number, tls: boolean): string {
  const h = host === '0.0.0.0' || host === '::' || host === '' ? hostname() : host;
  return `${tls ? 'https' : 'http'}://${h}:${port}`;
}

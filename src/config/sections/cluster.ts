import { z } from 'zod';
import { bool, duration, list, oneOf, secret, str } from '../fields.ts';

/** [cluster]: several svc processes over one bucket, coordinated by etcd. */
export const clusterSection = z.object({
  enabled: bool(false, 'Run as one node of a cluster coordinated by etcd (needs an S3 or Azure storage backend)'),
  name: str('svc', 'Cluster name; nodes with the same name and etcd prefix form one cluster'),
  node_id: str('', 'Stable id of this node (empty: derived from the host name and the time-series port)'),
  role: oneOf(['standalone', 'writer', 'reader', 'compactor'] as const, 'standalone', 'What this node does: writers ingest, readers answer queries, compactors run compaction, retention and continuous queries'),
  etcd_endpoints: list(['http://127.0.0.1:2379'], 'etcd client URLs (comma-separated in the environment)'),
  etcd_prefix: str('', 'Key prefix of this cluster in etcd (empty: /svc/v1/<name>)'),
  advertise_url: str('', "This node's HTTP URL as other nodes reach it, for forwarded requests (empty: http://<host>:<port>)"),
  shared_secret: secret('', 'Authenticates requests forwarded between nodes; the same on every node'),
  heartbeat_interval: duration('1s', 'How often a node renews its membership in etcd'),
  failover_enabled: bool(true, 'Let a standby take over when the active writer or compactor loses its lease without resigning (false: the role stays empty until that node is back or an admin calls DELETE /api/v1/cluster/elections/<writer|compactor>/holder; a graceful stop still hands over). With false a writer acknowledges writes once in its own WAL, not in the shared WAL'),
  failover_timeout: duration('30s', 'How long heartbeats may be missing before another node takes over'),
  failover_cooldown: duration('60s', 'An active writer or compactor elected less than this long ago that lost its lease but campaigns again keeps the role (the next node lets it lead); one that is gone is replaced at once, whatever the cooldown'),
  wal_group_commit: duration('50ms', "How long a group of writes waits for more before the primary writer commits it to the shared WAL (one segment in the bucket, registered in etcd) and acknowledges it, counted from its first write or the end of the previous commit; a group that holds as many writes as the last one is committed at once"),
  file_grace_period: duration('5m', 'How long a replaced data file stays in the bucket, so queries already running on other nodes still read it'),
  manifest_snapshot_interval: duration('5m', 'How often the active compactor writes a snapshot of the file manifest to the bucket, so joining nodes replay only later changes (0: never)'),
  query_gate_on_catchup: bool(false, 'A reader answers queries 503 until its manifest has caught up with etcd'),
});

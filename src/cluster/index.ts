/** Coordination beyond one machine: the etcd client, leases, elections, watches and membership. */
export { EtcdClient, EtcdError, type Compare, type Op, type TxnResult } from './etcd/etcd-client.ts';
export { LeaseKeeper } from './etcd/lease-keeper.ts';
export { Candidacy, readLeader, type Leader } from './etcd/election.ts';
export { watch, type Watch, type WatchHandlers } from './etcd/watch.ts';
export type { KeyValue, WatchEvent } from './etcd/wire.ts';
export { Membership } from './membership.ts';
export { ROLES, STATES, observedState, type NodeRecord, type NodeState, type Role } from './node-record.ts';
export { ClusterNode, connectEtcd, type ClusterSettings } from './cluster-node.ts';
export { defaultAdvertiseUrl, openCluster, type ClusterConfig } from './start-cluster.ts';
export { SharedManifest } from './shared-manifest.ts';
export { ManifestSnapshots, snapshotKey } from './manifest-snapshot.ts';
export { ReplicatedMetadata } from './replicated-metadata.ts';
export { destinationOf, type Destination } from './request-routing.ts';
export { SharedWal, notPrimary, NOT_PRIMARY_HEADER } from './shared-wal.ts';
export { SharedTicket } from './shared-wal-state.ts';
export { LocalWalCoverage } from './local-wal-coverage.ts';

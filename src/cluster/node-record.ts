/** The record each cluster node keeps in etcd, and how its state is read from it. */
import { z } from 'zod';

export const ROLES = ['standalone', 'writer', 'reader', 'compactor'] as const;
export const STATES = ['joining', 'healthy', 'unhealthy', 'dead', 'leaving', 'unknown'] as const;
export type Role = (typeof ROLES)[number];
export type NodeState = (typeof STATES)[number];

export const nodeRecordSchema = z.object({
  id: z.string(),
  role: z.enum(ROLES),
  state: z.enum(STATES),
  address: z.string(),
  version: z.string(),
  started_at: z.string(),
  last_heartbeat: z.string(),
});

/** A node as the cluster routes show it. */
export type NodeRecord = z.output<typeof nodeRecordSchema>;

/**
 * The state a reader should believe: `dead` once the node's lease is gone, `unhealthy` when its
 * heartbeats are late by more than three intervals, else what the node said of itself.
 */
export function observedState(rec: NodeRecord, alive: boolean, now: number, heartbeatMs: number): NodeState {
  if (!alive) return 'dead';
  if (rec.state === 'leaving') return 'leaving';
  const age = now - Date.parse(rec.last_heartbeat);
  if (!(age <= 3 * heartbeatMs)) return 'unhealthy';
  return rec.state;
}

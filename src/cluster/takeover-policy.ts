/**
 * Whether a candidate that reached the front of its election (the active writer's or compactor's)
 * may take over now, from `cluster.failover_enabled` and `cluster.failover_cooldown`.
 *
 * Each holder records itself (`<prefix>/primaries/<election>`, no lease) when it takes over and
 * deletes the record when it resigns gracefully. A candidate at the front whose predecessor left a
 * record naming another node therefore knows the predecessor did not resign: it lost its lease
 * (killed, cut off, paused longer than failover_timeout) and is fenced from that instant.
 */
import { z } from 'zod';

export const primaryRecordSchema = z.object({ node_id: z.string(), elected_at: z.number() });
export type PrimaryRecord = z.infer<typeof primaryRecordSchema>;

export interface TakeoverInput {
  self: string;
  /** The last holder's record; null on a fresh cluster, after a graceful resign or an operator's promotion. */
  record: PrimaryRecord | null;
  /** The recorded holder is a candidate in the election again (it lost its lease but came back). */
  recordedIsCandidate: boolean;
  failoverEnabled: boolean;
  cooldownMs: number;
  now: number;
}

export type TakeoverDecision =
  | { kind: 'take' }
  /** failover_enabled = false: leave the election until the recorded holder is back or an operator clears the record. */
  | { kind: 'stand-aside'; holder: string }
  /** The recorded holder is alive again and was elected less than the cooldown ago: let it lead until `untilMs`. */
  | { kind: 'yield'; holder: string; untilMs: number };

/**
 * The rules. The cooldown delays a failover away from a holder that is still there to keep the role
 * (alive again, a candidate) and was elected less than the cooldown ago; it never keeps the cluster
 * without a holder: a holder whose lease lapsed and that is not a candidate again is gone, and the
 * next candidate takes over at once whatever the cooldown.
 */
export function decideTakeover(i: TakeoverInput): TakeoverDecision {
  if (!i.record || i.record.node_id === i.self) return { kind: 'take' };
  if (!i.failoverEnabled) return { kind: 'stand-aside', holder: i.record.node_id };
  const until = i.record.elected_at + i.cooldownMs;
  if (i.recordedIsCandidate && i.now < until) return { kind: 'yield', holder: i.record.node_id, untilMs: until };
  return { kind: 'take' };
}

/** Parses a stored record; a value that is not one counts as no record (the next candidate may take over). */
export function parsePrimaryRecord(value: string | undefined): PrimaryRecord | null {
  if (!value) return null;
  try {
    const parsed = primaryRecordSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

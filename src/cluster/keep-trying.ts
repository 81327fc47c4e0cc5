/**
 * Runs `attempt` until it succeeds or `stopped()` holds, backing off between failures. Reloads after
 * etcd compacted a watch's history use it: etcd may be between leaders right when it reports the
 * compaction, and giving up there would leave the node with no watch at all, deaf to later changes.
 */
export async function keepTrying(what: string, attempt: () => Promise<void>, stopped: () => boolean, warn: (msg: string, fields?: Record<string, unknown>) => void): Promise<void> {
  for (let backoff = 100; !stopped(); backoff = Math.min(backoff * 2, 2000)) {
    try {
      await attempt();
      return;
    } catch (err) {
      warn(`cannot ${what}; trying again`, { error: (err as Error).message, retry_ms: backoff });
      await Bun.sleep(backoff);
    }
  }
}

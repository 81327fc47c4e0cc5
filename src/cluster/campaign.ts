/**
 * One node's campaign in its role's election under the failover settings: it waits to reach the front
 * of the line, then takes over, or (failover_enabled = false, or the cooldown of a just-elected holder
 * that came back) leaves the line and enters again when the takeover policy allows.
 */
import { CandidacyGone, type Candidacy } from './etcd/election.ts';
import type { Election, ElectionHolder } from './election-holder.ts';
import { decideTakeover, type TakeoverDecision } from './takeover-policy.ts';

interface Log {
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/** What a campaign needs of its node. */
export interface CampaignHost {
  holder: ElectionHolder;
  nodeId: string;
  leaseId: string;
  failoverEnabled: boolean;
  cooldownMs: number;
  /** How often a node out of the line looks whether it may enter again. */
  pollMs: number;
  log: Log;
  signal: AbortSignal;
  /** False once the node stopped or lost the lease this campaign runs under. */
  current(): boolean;
  candidacy(): Candidacy | null;
  setCandidacy(c: Candidacy): void;
  /** Leaves the line (the node's candidacy is then null). */
  standAside(): void;
  takeOver(mine: Candidacy, failover: boolean): Promise<void>;
  /** The candidacy's key is gone although the lease is held: give the lease back and join again. */
  candidacyGone(reason: string): void;
}

export async function campaign(host: CampaignHost, election: Election, first: Candidacy): Promise<void> {
  let mine = first;
  let failover = false;
  while (host.current() && host.candidacy() === mine) {
    try {
      failover = (await mine.won(host.signal)) || failover;
    } catch (err) {
      if (!host.current() || host.candidacy() !== mine) return;
      // The key is gone while the lease is held: this candidacy no longer stands, so the node joins again.
      if (err instanceof CandidacyGone) return host.candidacyGone(err.message);
      // etcd did not answer (slow, between leaders): a campaign that ended here would leave the node a
      // candidate nobody follows, holding the election without ever leading.
      host.log.warn('cannot follow the election; retrying', { election, error: (err as Error).message });
      await Bun.sleep(500);
      continue;
    }
    if (!host.current() || host.candidacy() !== mine) return;
    let decision: TakeoverDecision;
    try {
      decision = await decide(host, election);
    } catch (err) {
      host.log.warn('cannot read the last holder of the election; retrying', { election, error: (err as Error).message });
      await Bun.sleep(500);
      continue;
    }
    if (decision.kind === 'take') return host.takeOver(mine, failover);
    host.log.warn(
      decision.kind === 'stand-aside'
        ? `failover is disabled: the active ${election} ${decision.holder} lost its lease without resigning; this node does not take over until it is back or an admin calls DELETE /api/v1/cluster/elections/${election}/holder`
        : `the active ${election} ${decision.holder} was elected less than failover_cooldown ago and is back; this node lets it lead until the cooldown ends`,
      { election, holder: decision.holder },
    );
    host.standAside();
    await mine.resign().catch(() => undefined);
    await waitToEnter(host, election, decision);
    const again = await enterAgain(host, election);
    if (!again) return;
    mine = again;
    failover = true;
  }
}

/** What the takeover policy says for this node, at the front of `election`, now. */
async function decide(host: CampaignHost, election: Election): Promise<TakeoverDecision> {
  const { record, candidates } = await host.holder.read(election);
  return decideTakeover({
    self: host.nodeId,
    record,
    recordedIsCandidate: !!record && candidates.includes(record.node_id),
    failoverEnabled: host.failoverEnabled,
    cooldownMs: host.cooldownMs,
    now: Date.now(),
  });
}

/** Polls until the node may enter again: the holder is back or the record changed (stand-aside); the cooldown ended or nobody campaigns (yield). */
async function waitToEnter(host: CampaignHost, election: Election, decision: Exclude<TakeoverDecision, { kind: 'take' }>): Promise<void> {
  while (host.current()) {
    await Bun.sleep(host.pollMs);
    const now = await host.holder.read(election).catch(() => null);
    if (!now) continue;
    const back = now.candidates.includes(decision.holder);
    if (decision.kind === 'stand-aside' && (now.record?.node_id !== decision.holder || back)) return;
    if (decision.kind === 'yield' && (Date.now() >= decision.untilMs || now.candidates.length === 0)) return;
  }
}

async function enterAgain(host: CampaignHost, election: Election): Promise<Candidacy | null> {
  while (host.current()) {
    try {
      const c = await host.holder.enter(election, host.leaseId, host.nodeId);
      if (!host.current()) return null;
      host.setCandidacy(c);
      return c;
    } catch (err) {
      host.log.warn('cannot enter the election again; retrying', { election, error: (err as Error).message });
      await Bun.sleep(500);
    }
  }
  return null;
}

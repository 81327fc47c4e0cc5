/**
 * One node of a cluster: its etcd lease, its membership record and heartbeats, and the elections
 * its role takes part in (the active writer, the active compactor). When the lease is lost (etcd
 * unreachable for a whole failover_timeout, or a pause longer than that) the node steps down at
 * once and joins again with a new lease, behind any node that took over meanwhile.
 */
import { Candidacy, leaderOf, readLeader } from './etcd/election.ts';
import { EtcdClient, EtcdError, type Compare, type Op } from './etcd/etcd-client.ts';
import { LeaseKeeper } from './etcd/lease-keeper.ts';
import { Membership } from './membership.ts';
import type { NodeRecord, Role } from './node-record.ts';
import { notPrimary } from './shared-wal.ts';
import { campaign } from './campaign.ts';
import { ElectionHolder, type Election } from './election-holder.ts';

export interface ClusterSettings {
  name: string;
  nodeId: string;
  role: Role;
  endpoints: string[];
  prefix: string;
  advertiseUrl: string;
  version: string;
  heartbeatMs: number;
  failoverTimeoutMs: number;
  /** false: a standby takes over only from a holder that resigned (see takeover-policy.ts). */
  failoverEnabled: boolean;
  failoverCooldownMs: number;
}

interface Log {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** The elections a role runs in: writers elect the active writer, compactors the active compactor. */
const ELECTION_OF: Partial<Record<Role, 'writer' | 'compactor'>> = { writer: 'writer', compactor: 'compactor' };

/** Waits for etcd to answer, retrying for at most `timeoutMs`; throws naming every endpoint. */
export async function connectEtcd(endpoints: string[], timeoutMs: number): Promise<EtcdClient> {
  const client = new EtcdClient({ endpoints, requestTimeoutMs: Math.min(3000, timeoutMs) });
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      await client.members();
      return client;
    } catch (err) {
      last = err;
      await Bun.sleep(200);
    }
  }
  throw new EtcdError(`cannot reach etcd at ${endpoints.join(', ')} within ${Math.round(timeoutMs / 1000)}s: ${(last as Error)?.message ?? 'no answer'}`, true);
}

/** A running cluster node. */
export class ClusterNode {
  private keeper: LeaseKeeper | null = null;
  private membership!: Membership;
  private candidacy: Candidacy | null = null;
  private heartbeatTimer: ReturnType<typeof setInterval> | null = null;
  private leading = false;
  /** Won the election (the fence holds); `leading` follows once the take-over work is done. */
  private elected = false;
  private stopped = false;
  private ready = false;
  private lastContact = 0;
  private campaignAbort = new AbortController();
  /** Bumped at every join, so a campaign of an older lease stops. */
  private generation = 0;
  /** The generation whose campaign runs now (one at a time, so a take-over never runs twice). */
  private campaigning: number | null = null;
  /** A graceful handover runs: a step down meanwhile must not campaign again. */
  private handingOver = false;
  private readonly holder: ElectionHolder;
  /** The revision the local copy of the shared manifest has applied (set by main.ts). */
  manifestRevision: () => number | null = () => null;
  /** Work before a newly elected node takes requests (the writer's shared WAL replay); set by main.ts. */
  onElected: (() => Promise<void>) | null = null;
  /** This node stopped being the elected one (lease lost, fenced, handed over); set by main.ts. */
  onDemoted: () => void = () => {};
  /** This node took over from another one (svc_cluster_failovers_total); set by main.ts. */
  onFailover: () => void = () => {};
  /** The cluster's manifest head and what this node applied (set once the shared manifest runs). */
  manifestCatchUp: (() => Promise<{ head: number; applied: number }>) | null = null;

  constructor(
    readonly client: EtcdClient,
    readonly settings: ClusterSettings,
    private readonly log: Log,
  ) {
    this.holder = new ElectionHolder(client, settings.prefix);
  }

  /** Registers this node (reachable at `advertiseUrl` unless the settings name one), starts heartbeats, enters its role's election. */
  async start(advertiseUrl: string): Promise<void> {
    this.settings.advertiseUrl ||= advertiseUrl;
    const s = this.settings;
    this.membership = new Membership({
      client: this.client,
      prefix: s.prefix,
      heartbeatMs: s.heartbeatMs,
      self: { id: s.nodeId, role: s.role, address: s.advertiseUrl, version: s.version },
    });
    await this.join();
    this.heartbeatTimer = setInterval(() => void this.beat(), this.settings.heartbeatMs);
  }

  /**
   * Takes a new lease and, on it, the membership record and a place in the role's election. A join
   * that fails part way gives its lease back, so no lease is left renewed for nothing, and no
   * candidacy the node no longer follows is kept alive ahead of the one it enters next.
   */
  private async join(): Promise<void> {
    const gen = ++this.generation;
    this.campaignAbort.abort();
    this.campaignAbort = new AbortController();
    const ttlSec = Math.max(2, Math.ceil(this.settings.failoverTimeoutMs / 1000));
    // Only the keeper of the latest join may report its lease lost (an older one was given back).
    const keeper = await LeaseKeeper.start(this.client, { ttlSec, onLost: (reason) => void (gen === this.generation && this.onLeaseLost(reason)) });
    this.keeper = keeper;
    try {
      await this.membership.register(keeper.id);
      this.lastContact = Date.now();
      const election = ELECTION_OF[this.settings.role];
      if (!election) return;
      this.candidacy = await this.holder.enter(election, keeper.id, this.settings.nodeId);
      this.runCampaign(gen, election, this.candidacy);
    } catch (err) {
      if (gen === this.generation) this.generation++;
      await keeper.stop({ revoke: true });
      throw err;
    }
  }

  /**
   * Runs the campaign of `candidacy`, and again whenever it ends with this node still a candidate of
   * the current lease that does not lead (a step down during or after its take-over): a candidate
   * nobody campaigns for would hold the election without ever acting on it.
   */
  private runCampaign(gen: number, election: Election, candidacy: Candidacy): void {
    if (this.campaigning === gen) return;
    this.campaigning = gen;
    const s = this.settings;
    const running = campaign(
      {
        holder: this.holder,
        nodeId: s.nodeId,
        leaseId: this.keeper!.id,
        failoverEnabled: s.failoverEnabled,
        cooldownMs: s.failoverCooldownMs,
        pollMs: Math.max(100, Math.min(1000, s.heartbeatMs)),
        log: this.log,
        signal: this.campaignAbort.signal,
        current: () => this.current(gen),
        candidacy: () => this.candidacy,
        setCandidacy: (c) => (this.candidacy = c),
        standAside: () => (this.candidacy = null),
        takeOver: (mine, failover) => this.takeOver(mine, election, failover),
        candidacyGone: (reason) => void (this.current(gen) && this.onLeaseLost(reason)),
      },
      election,
      candidacy,
    );
    void running.finally(() => {
      if (this.campaigning === gen) this.campaigning = null;
      if (this.current(gen) && this.candidacy && !this.elected && !this.handingOver) this.runCampaign(gen, election, this.candidacy);
    });
  }

  /** A campaign goes on while its join is the latest and its lease is held (a lost lease starts a new one). */
  private current(gen: number): boolean {
    return gen === this.generation && !this.stopped && (this.keeper?.alive ?? false);
  }

  /**
   * Won the election: the fence holds from now on, but requests are taken only once `onElected` (the
   * writer's replay of the shared WAL) is done, so nothing is acknowledged ahead of the rows it replays.
   */
  private async takeOver(mine: Candidacy, election: 'writer' | 'compactor', waited: boolean): Promise<void> {
    if (this.candidacy !== mine || this.stopped) return;
    this.elected = true;
    for (let attempt = 0; this.candidacy === mine && !this.stopped; attempt++) {
      try {
        await this.holder.claim(mine, election, this.settings.nodeId);
        if (this.onElected) await this.onElected();
        break;
      } catch (err) {
        this.log.error('cannot take over as the active ' + election + '; retrying', { error: (err as Error).message, attempt });
        await Bun.sleep(Math.min(1000, 100 * (attempt + 1)));
      }
    }
    if (this.candidacy !== mine || this.stopped || !this.elected) return;
    this.leading = true;
    if (waited) this.onFailover();
    this.log.info(`this node is now the active ${election}`, { node_id: this.settings.nodeId, took_over: waited });
  }

  private async onLeaseLost(reason: string): Promise<void> {
    if (this.stopped) return;
    const was = this.leading;
    this.demote();
    this.candidacy = null;
    // The lost lease is given back at once: when this node only stopped hearing etcd (the lease may
    // still be alive there), its old candidacy would otherwise hold the election until the TTL ends.
    const lost = this.keeper;
    void lost?.stop({ revoke: true });
    this.log.warn('cluster lease lost; this node stepped down and joins again', { reason, was_leader: was });
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        await this.join();
        this.log.info('joined the cluster again with a new lease', { attempts: attempt + 1 });
        return;
      } catch (err) {
        if (attempt % 10 === 0) this.log.error('cannot rejoin the cluster', { error: (err as Error).message });
        await Bun.sleep(Math.min(1000, 100 * (attempt + 1)));
      }
    }
  }

  private async beat(): Promise<void> {
    if (this.stopped) return;
    try {
      const { nodes, reads } = await this.membership.heartbeatAndRead(this.ready ? 'healthy' : undefined, [`${this.electionPrefix('writer')}/`, `${this.electionPrefix('compactor')}/`]);
      this.lastContact = Date.now();
      this.view = { nodes, writer: leaderOf(reads[0] ?? [])?.value ?? null, compactor: leaderOf(reads[1] ?? [])?.value ?? null };
    } catch (err) {
      this.log.warn('cluster heartbeat failed', { error: (err as Error).message });
    }
  }

  private view: { nodes: NodeRecord[]; writer: string | null; compactor: string | null } = { nodes: [], writer: null, compactor: null };
  private rr = 0;

  /** Refreshes the cached view of members and leaders that request routing reads (once per heartbeat). */
  private async refreshView(): Promise<void> {
    const [nodes, leaders] = await Promise.all([this.membership.nodes(), this.leaders()]);
    this.view = { nodes, ...leaders };
  }

  /**
   * The base URL of a node for `target`, from the view refreshed every heartbeat: the active writer,
   * the active compactor, or the next healthy reader in turn; null when there is none.
   */
  async addressFor(target: 'writer' | 'compactor' | 'reader'): Promise<string | null> {
    const find = () => {
      const v = this.view;
      if (target === 'reader') {
        const readers = v.nodes.filter((n) => n.role === 'reader' && n.state === 'healthy' && n.id !== this.settings.nodeId);
        return readers.length ? readers[this.rr++ % readers.length]!.address : null;
      }
      const id = v[target];
      return v.nodes.find((n) => n.id === id && n.state !== 'dead')?.address ?? null;
    };
    const found = find();
    if (found) return found;
    // A leader may have changed since the last heartbeat: look once more, now.
    await this.refreshView().catch(() => undefined);
    return find();
  }

  /** Marks the node healthy once the server behind it is ready. */
  markReady(): void {
    this.ready = true;
    void this.beat();
  }

  private electionPrefix(kind: Election): string {
    return this.holder.electionPrefix(kind);
  }

  /** True while this node is the active writer or compactor of its role. */
  get isLeader(): boolean {
    return this.leading && (this.keeper?.alive ?? false);
  }

  /** The fencing comparison of this node's leadership, or null when it does not lead. */
  fence() {
    return this.elected && (this.keeper?.alive ?? false) && this.candidacy ? this.candidacy.fence() : null;
  }

  /**
   * The comparison that guards this node's manifest and shared WAL registrations: a writer registers
   * only under its election (AppError unavailable when it is not elected); other roles are fenced by
   * their own election while they hold it, and not at all otherwise.
   */
  commitFence(): Compare | null {
    const f = this.fence();
    if (!f && this.settings.role === 'writer') throw notPrimary('this node is not the primary writer; nothing was stored: retry (it goes to the primary)');
    return f;
  }

  /** A fenced registration proved another node holds this node's election: stop acting as its holder. */
  stepDown(reason: string): void {
    if (!this.elected) return;
    this.log.warn('this node is no longer the elected one; stepping down', { reason, role: this.settings.role });
    this.demote();
    // Campaign again on the same candidacy: etcd then says whether it still leads (the refusal was not
    // a lost election: it takes over again, replaying what it dropped) or is gone (it joins again).
    // Either way the node cannot stay a candidate that holds the election without acting on it.
    const election = ELECTION_OF[this.settings.role];
    if (election && this.candidacy && !this.handingOver && this.current(this.generation)) this.runCampaign(this.generation, election, this.candidacy);
  }

  private demote(): void {
    const was = this.elected;
    this.elected = false;
    this.leading = false;
    if (was) this.onDemoted();
  }

  /**
   * Graceful handover (SIGTERM): stops taking requests of its role (the gate answers a retryable 503
   * that forwarding nodes resend to the next primary), runs `finish` (drain the shared WAL, flush the
   * buffers), then resigns so a standby takes over at once. True when this node held the election.
   */
  async handOver(finish: () => Promise<unknown>): Promise<boolean> {
    if (!this.elected || !this.candidacy) return false;
    this.leading = false;
    this.handingOver = true;
    try {
      await finish();
    } catch (err) {
      this.log.warn('handover: cannot finish the work in hand; the next primary replays it', { error: (err as Error).message });
    }
    const mine = this.candidacy;
    this.candidacy = null;
    this.demote();
    await mine.resign(this.resignOps()).catch((err: Error) => this.log.warn('cannot resign the election; the lease expiry will hand over', { error: err.message }));
    this.log.info('handed the election over', { role: this.settings.role });
    return true;
  }

  /** An admin's failover by hand (see ElectionHolder.release). */
  releaseHolder(election: Election) {
    return this.holder.release(election);
  }

  /** A graceful resign also deletes the holder record, so the next candidate takes over whatever the failover settings. */
  private resignOps(): Op[] {
    const election = ELECTION_OF[this.settings.role];
    return election ? this.holder.resignOps(election) : [];
  }

  /** Reads members and leaders now instead of waiting for the next heartbeat. */
  refresh(): Promise<void> {
    return this.refreshView();
  }

  /** Milliseconds since etcd last answered this node (for the auth staleness rule). */
  get sinceContactMs(): number {
    return Date.now() - this.lastContact;
  }

  /** Ids of the active writer and compactor, as etcd says now. */
  async leaders(): Promise<{ writer: string | null; compactor: string | null }> {
    const [w, c] = await Promise.all([readLeader(this.client, this.electionPrefix('writer')), readLeader(this.client, this.electionPrefix('compactor'))]);
    return { writer: w?.value ?? null, compactor: c?.value ?? null };
  }

  /** Every node of the cluster. */
  nodes(): Promise<NodeRecord[]> {
    return this.membership.nodes();
  }

  /** This node's own record. */
  get self(): NodeRecord {
    return this.membership.self;
  }

  /** Removes a node's record (see Membership.remove). */
  removeNode(id: string, force: boolean) {
    return this.membership.remove(id, force);
  }

  /** etcd as this node sees it: reachable with quorum (a linearizable read succeeded), members, leader. */
  async health(): Promise<{ healthy: boolean; endpoints: string[]; members: number; leader: string | null; error?: string }> {
    const endpoints = this.client.endpoints;
    try {
      const [members] = await Promise.all([this.client.members(), this.client.get(`${this.settings.prefix}/health-probe`)]);
      let leader: string | null = null;
      for (const e of endpoints) {
        const st = await this.client.status(e).catch(() => null);
        if (st?.leader) {
          leader = members.find((m) => BigInt(m.id) === BigInt(st.leader))?.name || st.leader;
          break;
        }
      }
      this.lastContact = Date.now();
      return { healthy: true, endpoints, members: members.length, leader };
    } catch (err) {
      return { healthy: false, endpoints, members: 0, leader: null, error: (err as Error).message };
    }
  }

  /** The summary of GET /api/v1/cluster. */
  async status(): Promise<{
    cluster: string;
    node_id: string;
    writer: string | null;
    compactor: string | null;
    nodes: { total: number; by_role: Record<string, number>; by_state: Record<string, number> };
    etcd: { endpoints: string[]; healthy: boolean; members: number; leader: string | null };
    manifest_revision: number | null;
  }> {
    const [nodes, leaders, etcd] = await Promise.all([this.nodes(), this.leaders(), this.health()]);
    const count = (key: 'role' | 'state') => nodes.reduce<Record<string, number>>((acc, n) => ((acc[n[key]] = (acc[n[key]] ?? 0) + 1), acc), {});
    return {
      cluster: this.settings.name,
      node_id: this.settings.nodeId,
      ...leaders,
      nodes: { total: nodes.length, by_role: count('role'), by_state: count('state') },
      etcd: { endpoints: etcd.endpoints, healthy: etcd.healthy, members: etcd.members, leader: etcd.leader },
      manifest_revision: this.manifestRevision(),
    };
  }

  /** Graceful stop: says `leaving`, resigns its election, revokes its lease and removes its record. */
  async stop(): Promise<void> {
    if (this.stopped || !this.membership) return;
    this.stopped = true;
    this.campaignAbort.abort();
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    try {
      await this.membership.leave();
      if (this.candidacy) await this.candidacy.resign(this.elected ? this.resignOps() : []);
      await this.membership.deregister();
    } catch (err) {
      this.log.warn('cannot leave the cluster cleanly; the lease expiry will', { error: (err as Error).message });
    }
    this.demote();
    await this.keeper?.stop({ revoke: true });
  }
}

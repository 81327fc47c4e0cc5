/**
 * One node of a cluster: its etcd lease, its membership record and heartbeats, and the elections
 * its role takes part in (the active writer, the active compactor). When the lease is lost (etcd
 * unreachable for a whole failover_timeout, or a pause longer than that) the node steps down at
 * once and joins again with a new lease, behind any node that took over meanwhile.
 */
import { Candidacy, readLeader } from './etcd/election.ts';
import { EtcdClient, EtcdError, type Compare, type Op } from './etcd/etcd-client.ts';
import { LeaseKeeper } from './etcd/lease-keeper.ts';
import { Membership } from './membership.ts';
import type { NodeRecord, Role } from './node-record.ts';
import { notPrimary } from './shared-wal.ts';
import { decideTakeover, parsePrimaryRecord, type TakeoverDecision } from './takeover-policy.ts';

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
  ) {}

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

  private async join(): Promise<void> {
    const ttlSec = Math.max(2, Math.ceil(this.settings.failoverTimeoutMs / 1000));
    this.keeper = await LeaseKeeper.start(this.client, { ttlSec, onLost: (reason) => void this.onLeaseLost(reason) });
    await this.membership.register(this.keeper.id);
    this.lastContact = Date.now();
    const election = ELECTION_OF[this.settings.role];
    if (election) {
      const gen = ++this.generation;
      this.candidacy = await Candidacy.enter(this.client, this.electionPrefix(election), this.keeper.id, this.settings.nodeId);
      void this.campaign(election, this.candidacy, this.keeper.id, gen);
    }
  }

  /** A campaign goes on while its join is the latest and its lease is held (a lost lease starts a new one). */
  private current(gen: number): boolean {
    return gen === this.generation && !this.stopped && (this.keeper?.alive ?? false);
  }

  /**
   * Waits to reach the front of the election, then takes over, or (failover_enabled = false, or the
   * cooldown of a holder that came back) leaves the election and enters again when the policy allows.
   */
  private async campaign(election: 'writer' | 'compactor', first: Candidacy, leaseId: string, gen: number): Promise<void> {
    let mine = first;
    let failover = false;
    while (this.current(gen) && this.candidacy === mine) {
      try {
        failover = (await mine.won(this.campaignAbort.signal)) || failover;
      } catch {
        return;
      }
      if (!this.current(gen) || this.candidacy !== mine) return;
      let decision: TakeoverDecision;
      try {
        decision = await this.decide(election);
      } catch (err) {
        this.log.warn('cannot read the last holder of the election; retrying', { election, error: (err as Error).message });
        await Bun.sleep(500);
        continue;
      }
      if (decision.kind === 'take') return this.takeOver(mine, election, failover);
      this.log.warn(
        decision.kind === 'stand-aside'
          ? `failover is disabled: the active ${election} ${decision.holder} lost its lease without resigning; this node does not take over until it is back or an admin calls DELETE /api/v1/cluster/elections/${election}/holder`
          : `the active ${election} ${decision.holder} was elected less than failover_cooldown ago and is back; this node lets it lead until the cooldown ends`,
        { election, holder: decision.holder },
      );
      this.candidacy = null;
      await mine.resign().catch(() => undefined);
      await this.waitToEnter(election, decision, gen);
      const again = await this.enterAgain(election, leaseId, gen);
      if (!again) return;
      mine = again;
      failover = true;
    }
  }

  /** What the takeover policy says for this node, at the front of `election`, now. */
  private async decide(election: 'writer' | 'compactor'): Promise<TakeoverDecision> {
    const { record, candidates } = await this.holder(election);
    const s = this.settings;
    return decideTakeover({
      self: s.nodeId,
      record,
      recordedIsCandidate: !!record && candidates.includes(record.node_id),
      failoverEnabled: s.failoverEnabled,
      cooldownMs: s.failoverCooldownMs,
      now: Date.now(),
    });
  }

  private async holder(election: 'writer' | 'compactor') {
    const [rec, { kvs }] = await Promise.all([this.client.get(this.recordKey(election)), this.client.getPrefix(`${this.electionPrefix(election)}/`)]);
    return { record: parsePrimaryRecord(rec?.value), candidates: kvs.map((kv) => kv.value) };
  }

  /** Polls until the node may enter the election again: the holder is back, the record changed, or (yield) the cooldown ended or nobody leads. */
  private async waitToEnter(election: 'writer' | 'compactor', decision: Exclude<TakeoverDecision, { kind: 'take' }>, gen: number): Promise<void> {
    const pollMs = Math.max(100, Math.min(1000, this.settings.heartbeatMs));
    while (this.current(gen)) {
      await Bun.sleep(pollMs);
      const now = await this.holder(election).catch(() => null);
      if (!now) continue;
      const back = now.candidates.includes(decision.holder);
      if (decision.kind === 'stand-aside' && (now.record?.node_id !== decision.holder || back)) return;
      if (decision.kind === 'yield' && (Date.now() >= decision.untilMs || now.candidates.length === 0)) return;
    }
  }

  private async enterAgain(election: 'writer' | 'compactor', leaseId: string, gen: number): Promise<Candidacy | null> {
    while (this.current(gen)) {
      try {
        const c = await Candidacy.enter(this.client, this.electionPrefix(election), leaseId, this.settings.nodeId);
        if (!this.current(gen)) return null;
        this.candidacy = c;
        return c;
      } catch (err) {
        this.log.warn('cannot enter the election again; retrying', { election, error: (err as Error).message });
        await Bun.sleep(500);
      }
    }
    return null;
  }

  /** The record of the election's last holder (no lease: it outlives the holder, and only a graceful resign deletes it). */
  private recordKey(election: 'writer' | 'compactor'): string {
    return `${this.settings.prefix}/primaries/${election}`;
  }

  /**
   * Records this node as the holder, under the election's fence. A holder taking the role back keeps
   * its first election time, so coming back after a lapse does not extend its cooldown.
   */
  private async claim(mine: Candidacy, election: 'writer' | 'compactor'): Promise<void> {
    const { record } = await this.holder(election);
    const electedAt = record?.node_id === this.settings.nodeId ? record.elected_at : Date.now();
    const value = JSON.stringify({ node_id: this.settings.nodeId, elected_at: electedAt });
    const r = await this.client.txn([mine.fence()], [{ put: { key: this.recordKey(election), value } }]);
    if (!r.succeeded) throw new Error('the election key is gone');
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
        await this.claim(mine, election);
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
    this.log.warn('cluster lease lost; this node stepped down and joins again', { reason, was_leader: was });
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        await this.join();
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
      await this.membership.heartbeat(this.ready ? 'healthy' : undefined);
      this.lastContact = Date.now();
      await this.refreshView();
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

  private electionPrefix(kind: 'writer' | 'compactor'): string {
    return `${this.settings.prefix}/elections/${kind}`;
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

  /**
   * An operator's failover (failover_enabled = false): deletes the record of a holder whose lease is
   * gone, so the waiting candidates enter the election again. 'campaigning' when the recorded holder
   * is a candidate (it leads, or is about to): nothing is deleted then.
   */
  async releaseHolder(election: 'writer' | 'compactor'): Promise<{ outcome: 'none' | 'campaigning' | 'changed' | 'released'; holder: string | null }> {
    const key = this.recordKey(election);
    const [rec, { kvs }] = await Promise.all([this.client.get(key), this.client.getPrefix(`${this.electionPrefix(election)}/`)]);
    const record = parsePrimaryRecord(rec?.value);
    if (!rec) return { outcome: 'none', holder: null };
    if (record && kvs.some((kv) => kv.value === record.node_id)) return { outcome: 'campaigning', holder: record.node_id };
    // Only the record read above, so a holder that took over meanwhile keeps its own.
    const r = await this.client.txn([{ key, target: 'MOD', result: 'EQUAL', revision: rec.mod_revision }], [{ delete: { key } }]);
    return { outcome: r.succeeded ? 'released' : 'changed', holder: record?.node_id ?? null };
  }

  /** A graceful resign also deletes the holder record, so the next candidate takes over whatever the failover settings. */
  private resignOps(): Op[] {
    const election = ELECTION_OF[this.settings.role];
    return election ? [{ delete: { key: this.recordKey(election) } }] : [];
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

/**
 * The record of an election's holder, `<prefix>/primaries/<election>` = {node_id, elected_at}: a key
 * without a lease, so it outlives a holder whose lease lapsed; only a graceful resign (or an admin's
 * failover by hand) deletes it. The takeover policy reads it to tell a failover from a handover.
 */
import { Candidacy } from './etcd/election.ts';
import type { EtcdClient, Op } from './etcd/etcd-client.ts';
import { parsePrimaryRecord, type PrimaryRecord } from './takeover-policy.ts';

export type Election = 'writer' | 'compactor';

export class ElectionHolder {
  constructor(
    private readonly client: EtcdClient,
    private readonly prefix: string,
  ) {}

  key(election: Election): string {
    return `${this.prefix}/primaries/${election}`;
  }

  electionPrefix(election: Election): string {
    return `${this.prefix}/elections/${election}`;
  }

  /** Enters the line of `election` under `leaseId` (see Candidacy.enter). */
  enter(election: Election, leaseId: string, nodeId: string): Promise<Candidacy> {
    return Candidacy.enter(this.client, this.electionPrefix(election), leaseId, nodeId);
  }

  /** The recorded holder (null when none or unreadable) and the node ids campaigning now. */
  async read(election: Election): Promise<{ record: PrimaryRecord | null; modRevision: number | null; candidates: string[] }> {
    const [rec, { kvs }] = await Promise.all([this.client.get(this.key(election)), this.client.getPrefix(`${this.electionPrefix(election)}/`)]);
    return { record: parsePrimaryRecord(rec?.value), modRevision: rec?.mod_revision ?? null, candidates: kvs.map((kv) => kv.value) };
  }

  /**
   * Records `nodeId` as the holder under the election's fence. A holder taking the role back keeps its
   * first election time, so coming back after a lapse does not extend its cooldown.
   */
  async claim(mine: Candidacy, election: Election, nodeId: string): Promise<void> {
    const { record } = await this.read(election);
    const electedAt = record?.node_id === nodeId ? record.elected_at : Date.now();
    const r = await this.client.txn([mine.fence()], [{ put: { key: this.key(election), value: JSON.stringify({ node_id: nodeId, elected_at: electedAt }) } }]);
    if (!r.succeeded) throw new Error('the election key is gone');
  }

  /**
   * An admin's failover by hand: deletes the record of a holder that no longer campaigns, so candidates
   * standing aside (failover_enabled = false) enter again. Nothing is deleted while the holder campaigns
   * (it leads or is about to) or when the record changed since it was read.
   */
  async release(election: Election): Promise<{ outcome: 'none' | 'campaigning' | 'changed' | 'released'; holder: string | null }> {
    const { record, modRevision, candidates } = await this.read(election);
    if (modRevision === null) return { outcome: 'none', holder: null };
    if (record && candidates.includes(record.node_id)) return { outcome: 'campaigning', holder: record.node_id };
    const key = this.key(election);
    const r = await this.client.txn([{ key, target: 'MOD', result: 'EQUAL', revision: modRevision }], [{ delete: { key } }]);
    return { outcome: r.succeeded ? 'released' : 'changed', holder: record?.node_id ?? null };
  }

  /** Joins a graceful resign, so the next candidate takes over whatever the failover settings. */
  resignOps(election: Election): Op[] {
    return [{ delete: { key: this.key(election) } }];
  }
}

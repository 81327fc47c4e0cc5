/**
 * Keeps one etcd lease alive: renews it at a third of its TTL, and reports it lost when etcd says it
 * expired or when no renewal got through for a whole TTL (the keys it holds are then gone, or about
 * to be, so the holder must stop acting on them).
 */
import type { EtcdClient } from './etcd-client.ts';

export interface LeaseKeeperOptions {
  ttlSec: number;
  onLost(reason: string): void;
  /** Injected for tests; Date.now by default. */
  now?: () => number;
}

/** A granted lease kept alive until `stop` or until it is lost. */
export class LeaseKeeper {
  private timer: ReturnType<typeof setInterval> | null = null;
  private lastRenewed: number;
  private lost = false;
  private renewing = false;

  private constructor(
    private readonly client: EtcdClient,
    readonly id: string,
    private readonly opts: LeaseKeeperOptions,
  ) {
    this.lastRenewed = (opts.now ?? Date.now)();
  }

  /** Grants a lease and starts renewing it. */
  static async start(client: EtcdClient, opts: LeaseKeeperOptions): Promise<LeaseKeeper> {
    const id = await client.leaseGrant(opts.ttlSec);
    const keeper = new LeaseKeeper(client, id, opts);
    keeper.timer = setInterval(() => void keeper.renew(), Math.max(100, (opts.ttlSec * 1000) / 3));
    return keeper;
  }

  /** True until the lease is lost or stopped. */
  get alive(): boolean {
    return !this.lost && this.timer !== null;
  }

  private async renew(): Promise<void> {
    if (this.renewing || this.lost) return;
    this.renewing = true;
    const now = this.opts.now ?? Date.now;
    try {
      const ttl = await this.client.leaseKeepAlive(this.id);
      if (ttl <= 0) return this.markLost('etcd reports the lease expired');
      this.lastRenewed = now();
    } catch (err) {
      if (now() - this.lastRenewed >= this.opts.ttlSec * 1000) this.markLost(`no renewal for ${this.opts.ttlSec}s: ${(err as Error).message}`);
    } finally {
      this.renewing = false;
    }
  }

  private markLost(reason: string): void {
    if (this.lost) return;
    this.lost = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.opts.onLost(reason);
  }

  /**
   * Stops renewing; with `revoke`, deletes the lease (and its keys) at once. A lease reported lost is
   * revoked too: lost may mean only that no renewal got through, while etcd still holds it.
   */
  async stop(opts: { revoke?: boolean } = {}): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (opts.revoke) await this.client.leaseRevoke(this.id).catch(() => undefined);
  }
}

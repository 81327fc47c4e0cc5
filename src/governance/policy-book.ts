/**
 * The policies in force: every policy held in memory (read on each query), written through to the
 * store, so a change applies to the very next request. A token's own policy wins over the default.
 */
import { randomId } from '../lib/crypto.ts';
import { conflict, invalid, notFound } from '../lib/errors.ts';
import type { Policy, PolicyLimits } from './policy.ts';
import type { PolicyStore } from './policy-store.ts';

/** Policy CRUD with the rules of the API, and the lookup the query path uses. */
export class PolicyBook {
  private readonly byId = new Map<string, Policy>();
  private readonly byToken = new Map<string | null, Policy>();

  constructor(
    private readonly store: PolicyStore,
    /** True when a token with this id exists (policies for unknown tokens are refused). */
    private readonly tokenExists: (tokenId: string) => boolean,
    private readonly now: () => number = Date.now,
  ) {
    this.reload();
  }

  /** Reads every policy from the store again (after a restore replaced the metadata). */
  reload(): void {
    this.byId.clear();
    this.byToken.clear();
    for (const p of this.store.all()) this.index(p);
  }

  /** The policy that binds a token: its own, else the default unless the token is an admin. */
  effective(tokenId: string | null, isAdmin: boolean): Policy | null {
    if (this.byId.size === 0) return null;
    return (tokenId !== null ? this.byToken.get(tokenId) : undefined) ?? (isAdmin ? null : (this.byToken.get(null) ?? null));
  }

  list(): Policy[] {
    return [...this.byId.values()];
  }

  get(id: string): Policy {
    const p = this.byId.get(id);
    if (!p) throw notFound(`governance policy '${id}' not found`);
    return p;
  }

  create(input: PolicyLimits & { token_id: string | null }): Policy {
    this.checkToken(input.token_id, null);
    const at = new Date(this.now()).toISOString();
    const policy: Policy = { ...input, id: `gp_${randomId(8)}`, created_at: at, updated_at: at };
    this.store.put(policy);
    this.index(policy);
    return policy;
  }

  update(id: string, input: Partial<PolicyLimits> & { token_id?: string | null }): Policy {
    const old = this.get(id);
    const next: Policy = { ...old, ...input, id, created_at: old.created_at, updated_at: new Date(this.now()).toISOString() };
    if (input.token_id !== undefined) this.checkToken(next.token_id, id);
    this.store.put(next);
    this.unindex(old);
    this.index(next);
    return next;
  }

  remove(id: string): Policy {
    const p = this.get(id);
    this.store.remove(id);
    this.unindex(p);
    return p;
  }

  private checkToken(tokenId: string | null, self: string | null): void {
    if (tokenId !== null && !this.tokenExists(tokenId)) throw invalid(`token_id: no token with id '${tokenId}'`);
    const holder = this.byToken.get(tokenId);
    if (holder && holder.id !== self)
      throw conflict(tokenId === null ? `a default policy already exists (${holder.id}): update it instead` : `token '${tokenId}' already has policy ${holder.id}: update it instead`);
  }

  private index(p: Policy): void {
    this.byId.set(p.id, p);
    this.byToken.set(p.token_id, p);
  }

  private unindex(p: Policy): void {
    this.byId.delete(p.id);
    if (this.byToken.get(p.token_id)?.id === p.id) this.byToken.delete(p.token_id);
  }
}

/**
 * Where policies are kept. The port is what the policy book needs; the SQLite implementation keeps
 * them in the catalog (table `governance_policies`); a cluster backs the same port with etcd.
 */
import type { CatalogDb } from '../catalog/index.ts';
import { LIMIT_NAMES, type Policy, type PolicyLimits } from './policy.ts';

/** Storage of governance policies. */
export interface PolicyStore {
  all(): Policy[];
  /** Inserts or replaces the policy with this id. */
  put(policy: Policy): void;
  /** Removes a policy; false when it did not exist. */
  remove(id: string): boolean;
}

/** Policies in the catalog's SQLite file. */
export class SqlitePolicyStore implements PolicyStore {
  constructor(private readonly db: CatalogDb) {}

  all(): Policy[] {
    const rows = this.db
      .query<{ id: string; token_id: string | null; limits: string; created_at: string; updated_at: string }, []>(
        'SELECT id, token_id, limits, created_at, updated_at FROM governance_policies ORDER BY created_at, id',
      )
      .all();
    return rows.map((r) => {
      const stored = JSON.parse(r.limits) as Partial<PolicyLimits>;
      const limits = Object.fromEntries(LIMIT_NAMES.map((k) => [k, stored[k] ?? null])) as PolicyLimits;
      return { id: r.id, token_id: r.token_id, ...limits, created_at: r.created_at, updated_at: r.updated_at };
    });
  }

  put(p: Policy): void {
    const limits = JSON.stringify(Object.fromEntries(LIMIT_NAMES.map((k) => [k, p[k]])));
    this.db
      .prepare('INSERT OR REPLACE INTO governance_policies (id, token_id, limits, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
      .run(p.id, p.token_id, limits, p.created_at, p.updated_at);
  }

  remove(id: string): boolean {
    return this.db.prepare('DELETE FROM governance_policies WHERE id = ?').run(id).changes > 0;
  }
}

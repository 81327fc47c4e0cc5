import type { CatalogDb } from '../../catalog/index.ts';
import type { TokenStore } from '../token-store.ts';
import { Authorizer } from './authorizer.ts';
import { RbacService } from './rbac-service.ts';
import { RbacStore } from './rbac-store.ts';

/** The authorizer and the RBAC service over one metadata database; `enabled` is rbac.enabled. */
export function createRbac(db: CatalogDb, tokens: TokenStore, enabled: boolean): { authorizer: Authorizer; rbac: RbacService } {
  const store = new RbacStore(db);
  const authorizer = new Authorizer(store, tokens, enabled);
  return { authorizer, rbac: new RbacService(store, tokens, authorizer) };
}

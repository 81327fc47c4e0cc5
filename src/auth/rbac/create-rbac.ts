import type { CatalogDb } from '../../catalog/index.ts';
import type { TokenStore } from '../token-store.ts';
import { Authorizer } from './authorizer.ts';
import { RbacService } from './rbac-service.ts';
import { RbacStore } from './rbac-store.ts';
import { SystemDatabases } from './system-databases.ts';

/**
 * The authorizer and the RBAC service over one metadata database; `enabled` is rbac.enabled,
 * `systemDatabases` the databases svc keeps for itself (walled off from every ordinary token).
 */
export function createRbac(db: CatalogDb, tokens: TokenStore, enabled: boolean, systemDatabases: readonly string[]): { authorizer: Authorizer; rbac: RbacService } {
  const store = new RbacStore(db);
  const authorizer = new Authorizer(store, tokens, enabled, new SystemDatabases(systemDatabases));
  return { authorizer, rbac: new RbacService(store, tokens, authorizer) };
}

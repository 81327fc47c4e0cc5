export { TokenStore, type TokenRecord } from './token-store.ts';
export { TokenService, PERMISSIONS, mayDo, type Principal } from './token-service.ts';
export { TokenCache } from './token-cache.ts';
export { extractToken } from './credentials.ts';
export {
  Authorizer,
  createRbac,
  RbacService,
  RbacStore,
  organizationBody,
  organizationPatch,
  teamBody,
  teamPatch,
  memberBody,
  roleBody,
  rolePatch,
  grantBody,
  grantPatch,
  checkQuery,
} from './rbac/index.ts';

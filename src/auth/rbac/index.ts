/** RBAC: organizations, teams, roles and measurement permissions, and the one authorizer every route calls. */
export { Authorizer } from './authorizer.ts';
export { createRbac } from './create-rbac.ts';
export { RbacService } from './rbac-service.ts';
export { RbacStore, type Organization, type Team, type Member, type Role, type MeasurementGrant } from './rbac-store.ts';
export * from './rbac-schema.ts';
export type { Decision } from './policy.ts';

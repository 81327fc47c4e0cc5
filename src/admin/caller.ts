import type { TableAccess } from '../lib/table-access.ts';

/**
 * Who asks for a lifecycle change: the token (null with auth off) and its access. A continuous query
 * or retention policy records its owner's token id and runs, every time, with the owner's access
 * of that moment (auth/rbac's authorizer), so a later RBAC change applies to its next run.
 */
export interface Caller {
  tokenId: string | null;
  access: TableAccess;
}

/** The access of a recorded owner (null: created with auth off or before owners were recorded). */
export type OwnerAccess = (ownerTokenId: string | null) => TableAccess;

/**
 * What a caller may do with the data of one measurement: the port the query engine, the write path
 * and the admin features call, implemented by auth/rbac's authorizer. It lives here, below every
 * layer that touches data, so none of them needs to know how rights are granted.
 */
import { AppError } from './errors.ts';

/** An action on a measurement's data. */
export type DataAction = 'read' | 'write' | 'delete';

/** The rights of one request (or of the owner of a scheduled job), fixed when it starts. */
export interface TableAccess {
  /** True when `action` on `database`.`measurement` is allowed. */
  allows(action: DataAction, database: string, measurement: string): boolean;
  /** True when `action` is allowed on some measurement of `database` (database listings). */
  allowsDatabase(action: DataAction, database: string): boolean;
  /**
   * True when the caller is the service that keeps `database` (a system database) for itself: its
   * deletes there are that service's own duty (a memory purge), which `delete.enabled` does not guard.
   */
  ownsSystemDatabase(database: string): boolean;
}

/**
 * Access of admins, internal work and servers with auth off: everything. Its deletes are users'
 * deletes, so it owns no system database (with auth off nothing tells the memory service from others).
 */
export const UNRESTRICTED: TableAccess = { allows: () => true, allowsDatabase: () => true, ownsSystemDatabase: () => false };

/** The 403 for a refused action; its body names the action, the database and the measurement. */
export function accessDenied(action: DataAction, database: string, measurement: string): AppError {
  return new AppError('forbidden', `token may not ${action} ${database}.${measurement}`, { extra: { action, database, measurement } });
}

/** Throws the 403 of accessDenied unless `access` allows `action` on every (database, measurement) pair. */
export function assertAllowed(access: TableAccess, action: DataAction, database: string, measurements: Iterable<string>): void {
  if (access === UNRESTRICTED) return;
  for (const m of measurements) if (!access.allows(action, database, m)) throw accessDenied(action, database, m);
}

/**
 * 403 unless `access` may read `database`.`measurement`, or some measurement of `database` when
 * `measurement` is null: who may see a definition (continuous query, policy, subscription) about it.
 */
export function assertReadable(access: TableAccess, database: string, measurement: string | null): void {
  if (!isReadable(access, database, measurement)) throw accessDenied('read', database, measurement ?? '*');
}

/** True when assertReadable would pass. */
export function isReadable(access: TableAccess, database: string, measurement: string | null): boolean {
  return access === UNRESTRICTED || (measurement === null ? access.allowsDatabase('read', database) : access.allows('read', database, measurement));
}

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
 * True when `access` may read `database`.`measurement`, or some measurement of `database` when
 * `measurement` is null: who may see a definition (continuous query, policy, subscription) about it.
 * One fetched by id that it may not see answers as an unknown id would: a 403 would name what it covers.
 */
export function isReadable(access: TableAccess, database: string, measurement: string | null): boolean {
  return access === UNRESTRICTED || (measurement === null ? access.allowsDatabase('read', database) : access.allows('read', database, measurement));
}

/**
 * The names of `databases` that `access` may read something of: the one rule of every database
 * listing (SHOW DATABASES, the Postgres catalog, GET /api/v1/databases), asked per database so a
 * database the authorizer hides (a system database, one outside every role) is never named.
 */
export function readableDatabases(databases: Iterable<string>, access: TableAccess): string[] {
  return [...databases].filter((d) => isReadable(access, d, null));
}

/** What a restricted caller sees in place of an error text that may name data of any database. */
export const HIDDEN_ERROR = 'an error naming data this token may not read (an admin token sees it)';

/**
 * An error text that may name any data (the file a flush or a move failed on): whole to unrestricted
 * access, else HIDDEN_ERROR, since its names cannot be told apart from the rest of the text.
 */
export function errorFor(access: TableAccess, error: string | null): string | null {
  return error === null || access === UNRESTRICTED ? error : HIDDEN_ERROR;
}

/** The entries of `list` whose measurement `access` may read (measurement listings, compaction candidates). */
export function readableMeasurements<T extends { database: string; measurement: string }>(list: readonly T[], access: TableAccess): T[] {
  return access === UNRESTRICTED ? [...list] : list.filter((m) => access.allows('read', m.database, m.measurement));
}

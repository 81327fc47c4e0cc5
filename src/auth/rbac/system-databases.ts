/**
 * System databases: the ones svc keeps its own state in (the memory service's `agent_memory`). Only
 * the credential of the service that keeps them and admins reach them, on every path; every other
 * token is refused and does not see them in any listing. The authorizer wraps each access with these
 * walls, so every route, listing and scheduled job that consults an access inherits them.
 */
import type { DataAction, TableAccess } from '../../lib/table-access.ts';

/** The names of the system databases, compared without case (storage may not tell `A` from `a`). */
export class SystemDatabases {
  private readonly names: ReadonlySet<string>;

  constructor(names: readonly string[]) {
    this.names = new Set(names.map((n) => n.toLowerCase()));
  }

  /** True when `database` is a system database. */
  has(database: string): boolean {
    return this.names.has(database.toLowerCase());
  }

  /** `inner` without the system databases: what every credential but admins and services gets. */
  walled(inner: TableAccess): TableAccess {
    return new WalledAccess(inner, this);
  }

  /** A service credential's access: `inner`'s actions, on the system databases only, which it keeps. */
  confined(inner: TableAccess): TableAccess {
    return new ServiceAccess(inner, this);
  }
}

class WalledAccess implements TableAccess {
  constructor(
    private readonly inner: TableAccess,
    private readonly system: SystemDatabases,
  ) {}

  allows(action: DataAction, database: string, measurement: string): boolean {
    return !this.system.has(database) && this.inner.allows(action, database, measurement);
  }

  allowsDatabase(action: DataAction, database: string): boolean {
    return !this.system.has(database) && this.inner.allowsDatabase(action, database);
  }

  ownsSystemDatabase(): boolean {
    return false;
  }
}

// A leaked service credential reaches nothing of the users' data.
class ServiceAccess implements TableAccess {
  constructor(
    private readonly inner: TableAccess,
    private readonly system: SystemDatabases,
  ) {}

  allows(action: DataAction, database: string, measurement: string): boolean {
    return this.system.has(database) && this.inner.allows(action, database, measurement);
  }

  allowsDatabase(action: DataAction, database: string): boolean {
    return this.system.has(database) && this.inner.allowsDatabase(action, database);
  }

  ownsSystemDatabase(database: string): boolean {
    return this.system.has(database);
  }
}

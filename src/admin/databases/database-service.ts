import type { DatabaseStore, FileManifestStore } from '../../catalog/index.ts';
import { conflict, forbidden, invalid, notFound, unavailable } from '../../lib/errors.ts';
import { assertDatabaseName } from '../../lib/names.ts';
import { accessDenied, assertAllowed, readableDatabases, type TableAccess } from '../../lib/table-access.ts';
import type { FileReaper, ObjectStore } from '../../storage/index.ts';
import type { MeasurementLocks } from '../measurement-locks.ts';

/** What the database service needs from the write buffers (kept as functions so admin/ stays decoupled). */
export interface BufferedView {
  /** (database, measurement) pairs with rows not yet in files. */
  measurements(database?: string): { database: string; measurement: string }[];
  /**
   * Discards every buffered row of a database that is being dropped (releasing their WAL tickets) and
   * waits for its rows in flight to land in files; resolves to the rows discarded, -1 on timeout.
   */
  dropDatabase(database: string, timeoutMs?: number): number | Promise<number>;
}

/** One database as the API shows it. */
export interface DatabaseSummary {
  name: string;
  measurement_count: number;
}

/** Databases: listing with measurement counts, explicit create, and the guarded drop. */
export class DatabaseService {
  constructor(
    private readonly deps: {
      databases: DatabaseStore;
      manifest: FileManifestStore;
      store: ObjectStore;
      reaper: FileReaper;
      locks: MeasurementLocks;
      buffered: BufferedView;
      deleteEnabled: boolean;
      /** How long a drop waits for the database's rows in flight to reach files. */
      flushTimeoutMs: number;
    },
  ) {}

  /** Every known database `access` may read: created explicitly, by a write, or found with files; counts of readable measurements. */
  list(access: TableAccess): DatabaseSummary[] {
    const names = new Set(this.deps.databases.list().map((d) => d.name));
    for (const { database } of this.deps.manifest.measurements()) names.add(database);
    for (const { database } of this.deps.buffered.measurements()) names.add(database);
    const readable = readableDatabases(names, access);
    return readable.sort().map((name) => ({ name, measurement_count: this.readableNames(name, access).length }));
  }

  /** Creates a database; 400 for a bad or reserved name, 403 unless `access` may write to it, 409 when it exists. */
  create(name: string, access: TableAccess): DatabaseSummary & { created_at: string } {
    assertDatabaseName(name);
    if (!access.allowsDatabase('write', name)) throw accessDenied('write', name, '*');
    if (this.exists(name)) throw conflict(`database '${name}' already exists`);
    const created = this.deps.databases.create(name);
    if (!created) throw conflict(`database '${name}' already exists`);
    return { name, measurement_count: 0, created_at: created.createdAt };
  }

  /** One database; 404 when unknown, 403 when `access` may read nothing of it. */
  get(name: string, access: TableAccess): DatabaseSummary {
    this.assertReadable(name, access);
    return { name, measurement_count: this.readableNames(name, access).length };
  }

  /** Measurement names of a database that `access` may read (files or buffered rows); 404 when the database is unknown. */
  measurements(name: string, access: TableAccess): string[] {
    this.assertReadable(name, access);
    return this.readableNames(name, access);
  }

  /**
   * Drops a database with all its files. Requires `delete.enabled` (403) and `confirm` (400). Files
   * leave the manifest in one transaction and are deleted by the reaper as soon as no query reads them.
   */
  async drop(name: string, confirmed: boolean, access: TableAccess): Promise<{ message: string; files_deleted: number }> {
    if (!this.deps.deleteEnabled) throw forbidden('deleting is disabled: set delete.enabled=true');
    if (!confirmed) throw invalid('confirmation required: add ?confirm=true');
    this.assertExists(name);
    if (!access.allowsDatabase('delete', name)) throw accessDenied('delete', name, '*');
    assertAllowed(access, 'delete', name, this.measurementNames(name));
    const { manifest, store, reaper } = this.deps;
    const keys = this.measurementNames(name).map((measurement) => ({ database: name, measurement }));
    // Under the measurements' locks no delete, retention or continuous query rewrites these files meanwhile.
    return this.deps.locks.run(keys, async () => {
      // Buffered rows go first so that no flush recreates files after they are deleted.
      if ((await this.deps.buffered.dropDatabase(name, this.deps.flushTimeoutMs)) < 0)
        throw unavailable(`cannot drop database '${name}': its rows in flight did not reach storage in time; retry later`, 5);
      const paths = manifest.listAll(name).map((f) => f.path);
      await manifest.commit(paths, []);
      await reaper.collect();
      // Files the manifest did not know (left by a crash) go too; tombstoned ones stay with the reaper.
      // A file registered or pending by now belongs to a write that came in during the drop: its
      // flush registers it next, so deleting it would leave the manifest listing a missing file.
      const waiting = new Set(manifest.tombstones());
      let orphans = 0;
      for (const o of await store.list(`${name}/`)) {
        if (waiting.has(o.key) || manifest.get(o.key) || manifest.pendingFiles().some((p) => p.path === o.key)) continue;
        if (await store.delete(o.key)) orphans++;
      }
      this.deps.databases.delete(name);
      return { message: `database '${name}' deleted`, files_deleted: paths.length + orphans };
    });
  }

  private exists(name: string): boolean {
    return this.deps.databases.get(name) !== null || this.measurementNames(name).length > 0;
  }

  private assertExists(name: string): void {
    if (!this.exists(name)) throw notFound(`database '${name}' not found`);
  }

  private assertReadable(name: string, access: TableAccess): void {
    this.assertExists(name);
    if (!access.allowsDatabase('read', name)) throw accessDenied('read', name, '*');
  }

  private readableNames(name: string, access: TableAccess): string[] {
    return this.measurementNames(name).filter((m) => access.allows('read', name, m));
  }

  private measurementNames(name: string): string[] {
    const set = new Set(this.deps.manifest.measurements(name).map((m) => m.measurement));
    for (const m of this.deps.buffered.measurements(name)) set.add(m.measurement);
    return [...set].sort();
  }
}

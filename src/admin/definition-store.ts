/**
 * Named definitions kept as JSON rows (`retention_policies`, `continuous_queries`; migration 0008):
 * an integer id, a unique name, the definition, and timestamps. JSON keeps the two form variants of
 * continuous queries as the client sent them, and new optional fields need no migration.
 */
import type { CatalogDb } from '../catalog/index.ts';

/** A stored definition with its identity and timestamps. */
export type Stored<T> = T & { id: number; created_at: string; updated_at: string };

interface Row {
  id: number;
  definition: string;
  created_at: string;
  updated_at: string;
}

/** CRUD over one definitions table. */
export class DefinitionStore<T extends { name: string }> {
  constructor(
    private readonly db: CatalogDb,
    private readonly table: 'retention_policies' | 'continuous_queries',
  ) {}

  /** Every definition, by id. */
  list(): Stored<T>[] {
    return this.db.query<Row, []>(`SELECT * FROM ${this.table} ORDER BY id`).all().map(toStored<T>);
  }

  /** One definition, or null. */
  get(id: number): Stored<T> | null {
    const r = this.db.query<Row, [number]>(`SELECT * FROM ${this.table} WHERE id = ?`).get(id);
    return r ? toStored<T>(r) : null;
  }

  /** True when another definition (not `exceptId`) has this name. */
  nameTaken(name: string, exceptId = -1): boolean {
    return this.db.query<{ id: number }, [string, number]>(`SELECT id FROM ${this.table} WHERE name = ? AND id <> ?`).get(name, exceptId) !== null;
  }

  /** Inserts a definition; returns it stored. */
  insert(def: T): Stored<T> {
    const now = new Date().toISOString();
    const r = this.db
      .query<{ id: number }, [string, string, string, string]>(`INSERT INTO ${this.table} (name, definition, created_at, updated_at) VALUES (?, ?, ?, ?) RETURNING id`)
      .get(def.name, JSON.stringify(def), now, now);
    return { ...def, id: r!.id, created_at: now, updated_at: now };
  }

  /** Replaces a definition; returns it stored, or null when the id is unknown. */
  update(id: number, def: T): Stored<T> | null {
    const now = new Date().toISOString();
    const changed = this.db.prepare(`UPDATE ${this.table} SET name = ?, definition = ?, updated_at = ? WHERE id = ?`).run(def.name, JSON.stringify(def), now, id).changes;
    return changed === 1 ? this.get(id) : null;
  }

  /** Removes a definition; true when it existed. */
  delete(id: number): boolean {
    return this.db.prepare(`DELETE FROM ${this.table} WHERE id = ?`).run(id).changes === 1;
  }
}

function toStored<T>(r: Row): Stored<T> {
  return { ...(JSON.parse(r.definition) as T), id: r.id, created_at: r.created_at, updated_at: r.updated_at };
}

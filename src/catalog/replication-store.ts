/**
 * Change capture for metadata tables that a cluster replicates (tokens, databases, policies, ...):
 * temporary triggers on this connection record every local insert, update and delete of a row in an
 * outbox, without any store knowing. Rows applied from another node go in with the capture switched
 * off, so they are not sent back. Rows travel as JSON objects of their columns.
 */
import type { CatalogDb } from './connection.ts';

/** A replicated table: its key column; columns whose changes alone are not replicated; rows never replicated. */
export interface ReplicatedTable {
  table: string;
  key: string;
  /** Columns that change too often to replicate on their own (a token's last use). */
  quietColumns?: string[];
  /** An SQL condition that keeps a row local (a per-process token); `row` is '', 'NEW.' or 'OLD.' to qualify columns. */
  localOnly?: (row: '' | 'NEW.' | 'OLD.') => string;
}

/** One captured change. */
export interface OutboxEntry {
  seq: number;
  table: string;
  key: string;
}

/** A row as JSON: column name -> value. */
export type Row = Record<string, string | number | null>;

const ident = (name: string) => {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a plain SQL identifier: ${name}`);
  return `"${name}"`;
};

/** See the file comment. */
export class ReplicationStore {
  constructor(
    private readonly db: CatalogDb,
    readonly tables: readonly ReplicatedTable[],
  ) {
    db.exec(`CREATE TEMP TABLE IF NOT EXISTS replication_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, key TEXT NOT NULL);
             CREATE TEMP TABLE IF NOT EXISTS replication_flags (applying INTEGER NOT NULL);
             INSERT INTO replication_flags SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM replication_flags);`);
    for (const t of tables) this.capture(t);
  }

  private columns(table: string): string[] {
    return this.db.query<{ name: string }, []>(`PRAGMA table_info(${ident(table)})`).all().map((r) => r.name);
  }

  private capture(t: ReplicatedTable): void {
    const table = ident(t.table);
    const key = ident(t.key);
    const quiet = new Set(t.quietColumns ?? []);
    const loud = this.columns(t.table).filter((c) => !quiet.has(c)).map(ident).join(', ');
    const local = (row: 'NEW.' | 'OLD.') => (t.localOnly ? ` AND NOT (${t.localOnly(row)})` : '');
    const applying = `(SELECT applying FROM temp.replication_flags) = 0`;
    const name = (op: string) => ident(`replicate_${t.table}_${op}`);
    this.db.exec(`
      DROP TRIGGER IF EXISTS temp.${name('ins')};
      DROP TRIGGER IF EXISTS temp.${name('upd')};
      DROP TRIGGER IF EXISTS temp.${name('del')};
      CREATE TEMP TRIGGER ${name('ins')} AFTER INSERT ON main.${table} WHEN ${applying}${local('NEW.')}
        BEGIN INSERT INTO replication_outbox (tbl, key) VALUES ('${t.table}', NEW.${key}); END;
      CREATE TEMP TRIGGER ${name('upd')} AFTER UPDATE OF ${loud} ON main.${table} WHEN ${applying}${local('NEW.')}
        BEGIN INSERT INTO replication_outbox (tbl, key) VALUES ('${t.table}', NEW.${key}); END;
      CREATE TEMP TRIGGER ${name('del')} AFTER DELETE ON main.${table} WHEN ${applying}${local('OLD.')}
        BEGIN INSERT INTO replication_outbox (tbl, key) VALUES ('${t.table}', OLD.${key}); END;`);
  }

  private spec(table: string): ReplicatedTable {
    const t = this.tables.find((x) => x.table === table);
    if (!t) throw new Error(`table ${table} is not replicated`);
    return t;
  }

  /** Captured changes not yet sent, oldest first. */
  outbox(limit = 500): OutboxEntry[] {
    return this.db.query<{ seq: number; tbl: string; key: string }, [number]>('SELECT seq, tbl, key FROM replication_outbox ORDER BY seq LIMIT ?').all(limit).map((r) => ({ seq: r.seq, table: r.tbl, key: String(r.key) }));
  }

  /** Whether a local change of this row waits to be sent (a remote echo must not overwrite it). */
  pending(table: string, key: string): boolean {
    return this.db.query<{ n: number }, [string, string]>('SELECT count(*) AS n FROM replication_outbox WHERE tbl = ? AND key = ?').get(table, key)!.n > 0;
  }

  /** Forgets sent changes up to `seq`. */
  sent(seq: number): void {
    this.db.query('DELETE FROM replication_outbox WHERE seq <= ?').run(seq);
  }

  /** The current row of `table` with `key`, or null when it is gone (or local only). */
  row(table: string, key: string): Row | null {
    const t = this.spec(table);
    const where = t.localOnly ? ` AND NOT (${t.localOnly('')})` : '';
    return this.db.query<Row, [string]>(`SELECT * FROM ${ident(table)} WHERE ${ident(t.key)} = ?${where}`).get(key) ?? null;
  }

  /** Every replicated row of `table`. */
  rows(table: string): Row[] {
    const t = this.spec(table);
    return this.db.query<Row, []>(`SELECT * FROM ${ident(table)}${t.localOnly ? ` WHERE NOT (${t.localOnly('')})` : ''}`).all();
  }

  private applying<T>(fn: () => T): T {
    return this.db.transaction(() => {
      this.db.exec('UPDATE temp.replication_flags SET applying = 1');
      try {
        return fn();
      } finally {
        this.db.exec('UPDATE temp.replication_flags SET applying = 0');
      }
    })();
  }

  private upsert(table: string, row: Row): void {
    const known = new Set(this.columns(table));
    const cols = Object.keys(row).filter((c) => known.has(c));
    this.db.query(`INSERT OR REPLACE INTO ${ident(table)} (${cols.map(ident).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...cols.map((c) => row[c] ?? null));
  }

  /** Applies a row another node wrote (null: it deleted it), without capturing it. */
  apply(table: string, key: string, row: Row | null): void {
    const t = this.spec(table);
    this.applying(() => {
      if (row) this.upsert(table, row);
      else this.db.query(`DELETE FROM ${ident(table)} WHERE ${ident(t.key)} = ?`).run(key);
    });
  }

  /** Makes `table` hold exactly `rows` (local-only rows stay), without capturing it. */
  replaceAll(table: string, rows: readonly Row[]): void {
    const t = this.spec(table);
    this.applying(() => {
      this.db.exec(`DELETE FROM ${ident(table)}${t.localOnly ? ` WHERE NOT (${t.localOnly('')})` : ''}`);
      for (const r of rows) this.upsert(table, r);
    });
  }
}

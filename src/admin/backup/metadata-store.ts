/**
 * The metadata database's side of backup and restore: a consistent snapshot with `VACUUM INTO` (SQLite
 * copies one read transaction, so writers keep going), and the restore of a snapshot into the live,
 * open database by copying its tables in one transaction — the file is never swapped under the
 * running server, so every open statement and cached handle stays valid.
 */
import type { CatalogDb } from '../../catalog/index.ts';

/**
 * Tables that describe data files or operations in progress, not configuration: the file manifest is
 * rebuilt from the restored data instead, and live operational state is kept.
 */
const NOT_RESTORED = new Set(['files', 'file_seq', 'file_tombstones', 'pending_files', 'compaction_manifests', 'compaction_jobs', 'schema_migrations']);

/** Tables merged (rows added, none removed) instead of replaced: a database record is harmless, and the writers cache known names. */
const MERGED = new Set(['databases']);

/** Rows of the live database a restore keeps (for example the in-process service's own token). */
export interface KeepRows {
  table: string;
  where: string;
}

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** Writes a consistent copy of the live database to `path` (which must not exist). */
export function snapshotInto(db: CatalogDb, path: string): void {
  db.prepare('VACUUM INTO ?').run(path);
}

/**
 * Replaces the restorable tables of the live database with those of the snapshot at `path`, in one
 * transaction (all or nothing). Only tables and columns present in both are copied; `keep` rows of the
 * live database survive. Returns the tables restored with their row counts.
 */
export function restoreTables(db: CatalogDb, path: string, keep: readonly KeepRows[] = []): Record<string, number> {
  db.prepare("ATTACH DATABASE ? AS snap").run(path);
  try {
    const tables = (schema: string) =>
      db.query<{ name: string }, []>(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).all().map((r) => r.name);
    const live = new Set(tables('main'));
    const names = tables('snap').filter((t) => live.has(t) && !NOT_RESTORED.has(t));
    const columns = (schema: string, t: string) => db.query<{ name: string }, []>(`SELECT name FROM pragma_table_info(${sqlLiteral(t)}, ${sqlLiteral(schema)})`).all().map((r) => r.name);
    const counts: Record<string, number> = {};
    // Tables are replaced whole, parents and children alike, so cascades would only delete rows about
    // to be copied; rows left pointing at nothing (a team member whose token the restore kept out)
    // are removed at the end instead, in the same transaction.
    db.run('PRAGMA foreign_keys = OFF');
    db.transaction(() => {
      for (const t of names) {
        const liveCols = new Set(columns('main', t));
        const cols = columns('snap', t).filter((c) => liveCols.has(c)).map(ident).join(', ');
        const kept = keep.filter((k) => k.table === t);
        const keepSql = kept.length > 0 ? kept.map((k) => `(${k.where})`).join(' OR ') : null;
        if (MERGED.has(t)) {
          counts[t] = db.run(`INSERT OR IGNORE INTO main.${ident(t)} (${cols}) SELECT ${cols} FROM snap.${ident(t)}`).changes;
          continue;
        }
        db.run(`DELETE FROM main.${ident(t)}${keepSql ? ` WHERE NOT (${keepSql})` : ''}`);
        const from = `SELECT ${cols} FROM snap.${ident(t)}${keepSql ? ` WHERE NOT (${keepSql})` : ''}`;
        counts[t] = db.run(`INSERT OR REPLACE INTO main.${ident(t)} (${cols}) ${from}`).changes;
      }
      dropDangling(db);
    })();
    return counts;
  } finally {
    db.run('PRAGMA foreign_keys = ON');
    db.run('DETACH DATABASE snap');
  }
}

const sqlLiteral = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Deletes rows whose foreign key points at nothing, repeating while a deletion leaves new ones (a chain of cascades). */
function dropDangling(db: CatalogDb): void {
  for (let round = 0; round < 16; round++) {
    const bad = db.query<{ table: string; rowid: number }, []>('PRAGMA main.foreign_key_check').all();
    if (bad.length === 0) return;
    for (const r of bad) db.run(`DELETE FROM main.${ident(r.table)} WHERE rowid = ?`, [r.rowid]);
  }
}

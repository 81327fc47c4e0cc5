/**
 * The search index in SQLite: the newest version of every memory (table `memory_index`) and two
 * external-content FTS5 indexes over its content (porter stemming over unicode61, and trigrams for
 * scripts written without spaces). Every change goes through here so the FTS rows always match.
 */
import { encodeTags, type StoredMemory } from '../memory-record.ts';
import type { MemoryFilter } from '../memory-sql.ts';
import type { MemoryDb } from './memory-db.ts';

/** A row of `memory_index` (optional strings as ''). */
export interface IndexRow {
  rowid: number;
  memory_id: string;
  org_id: string;
  agent_id: string;
  session_id: string;
  memory_type: string;
  event_type: string;
  content: string;
  metadata: string;
  tags: string;
  importance: number;
  dedup_key: string;
  parent_id: string;
  time_us: number;
  version: number;
  expires_us: number;
  updated_us: number;
}

/** A memory matched by a full-text query: what ranking needs, with its BM25 relevance (higher is better). */
export interface IndexHit {
  rowid: number;
  time_us: number;
  importance: number;
  bm25: number;
}

type Param = string | number;
const FTS_TABLES = ['memory_fts', 'memory_fts_cjk'] as const;

/** The newest version of each memory, full-text indexed. */
export class MemoryIndexStore {
  constructor(private readonly db: MemoryDb) {}

  /** Inserts or replaces memories; an older version never replaces a newer one. */
  upsert(rows: readonly StoredMemory[]): void {
    const find = this.db.query<{ rowid: number; version: number; content: string }, [string]>('SELECT rowid, version, content FROM memory_index WHERE memory_id = ?');
    const insert = this.db.query<{ rowid: number }, Param[]>(
      'INSERT INTO memory_index (memory_id, org_id, agent_id, session_id, memory_type, event_type, content, metadata, tags, importance, dedup_key, parent_id, time_us, version, expires_us, updated_us) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING rowid',
    );
    this.db.transaction(() => {
      for (const r of rows) {
        const old = find.get(r.memory_id);
        if (old && old.version > r.version) continue;
        if (old) this.removeRow(old.rowid, old.content);
        const { rowid } = insert.get(
          r.memory_id, r.org_id, r.agent_id, r.session_id ?? '', r.memory_type, r.event_type, r.content,
          r.metadata ? JSON.stringify(r.metadata) : '', encodeTags(r.tags), r.importance, r.dedup_key, r.parent_id ?? '',
          r.timeUs, r.version, r.expiresUs, r.updatedUs,
        )!;
        for (const t of FTS_TABLES) this.db.query(`INSERT INTO ${t} (rowid, content) VALUES (?, ?)`).run(rowid, r.content);
      }
    })();
  }

  /** Removes memories from the index and from both FTS indexes (their terms leave the index pages). */
  remove(memoryIds: readonly string[]): void {
    const find = this.db.query<{ rowid: number; content: string }, [string]>('SELECT rowid, content FROM memory_index WHERE memory_id = ?');
    this.db.transaction(() => {
      for (const id of memoryIds) {
        const old = find.get(id);
        if (old) this.removeRow(old.rowid, old.content);
      }
    })();
  }

  /** memory_id -> indexed version, for catching up with storage. */
  versions(): Map<string, number> {
    const out = new Map<string, number>();
    for (const r of this.db.query<{ memory_id: string; version: number }, []>('SELECT memory_id, version FROM memory_index').iterate()) out.set(r.memory_id, r.version);
    return out;
  }

  /**
   * The best `limit` matches of an FTS5 query among memories passing `f`, by BM25. `cjk` selects the
   * trigram index. Ties go to the newer memory (then the later rowid, so the order is always the same).
   */
  match(f: MemoryFilter, ftsQuery: string, cjk: boolean, limit: number): IndexHit[] {
    const t = cjk ? 'memory_fts_cjk' : 'memory_fts';
    const w = whereOf(f);
    const rows = (orgWide(f) && this.matchWindow(t, w, ftsQuery, limit)) || this.matchJoined(t, w, ftsQuery, limit);
    // FTS5's bm25() is lower for better matches; the ranking wants higher is better.
    for (const r of rows) r.bm25 = -r.bm25;
    return rows;
  }

  /** Every match joined to its row, filtered, then sorted by BM25: exact for any filter. */
  private matchJoined(t: string, w: Where, ftsQuery: string, limit: number): IndexHit[] {
    // CROSS JOIN keeps the full-text index as the outer loop: driven from the (org, agent, time)
    // index instead, every row would run the MATCH on its own, which is far slower. When the filter
    // reads only columns of memory_index_rank, the join reads that narrow index, not the wide rows.
    // bm25() is named once (ORDER BY its alias): it is computed once per matching row.
    return this.db
      .query<IndexHit, Param[]>(
        `SELECT i.rowid, i.time_us, i.importance, bm25(${t}) AS bm25 FROM ${t} CROSS JOIN memory_index i${w.covered ? ' INDEXED BY memory_index_rank' : ''} ON i.rowid = ${t}.rowid ` +
          `WHERE ${t} MATCH ? AND ${w.sql} ORDER BY bm25, i.time_us DESC, i.rowid DESC LIMIT ?`,
      )
      .all(ftsQuery, ...w.params, limit);
  }

  /**
   * The same answer as matchJoined when the filter lets nearly every match through, for about half
   * the cost: the best `WINDOW_FACTOR * limit` matches by BM25 alone (no join per match), then only
   * those rows joined to the filter. Every match strictly better than the window's worst score is
   * inside the window, so when `limit` of those pass the filter they are exactly the best `limit`.
   * Null when they are too few (a selective filter, or a large tie at the window's edge) and matches
   * lie beyond the window.
   */
  private matchWindow(t: string, w: Where, ftsQuery: string, limit: number): IndexHit[] | null {
    const size = Math.max(WINDOW_MIN, WINDOW_FACTOR * limit);
    // The edge is the window's worst score, or +inf when the window is shorter than asked: then it
    // holds every match and nothing lies beyond it. MATERIALIZED: the window is ranked once.
    const rows = this.db
      .query<IndexHit & { whole: number }, Param[]>(
        `WITH w(id, bm25) AS MATERIALIZED (SELECT rowid, bm25(${t}) FROM ${t} WHERE ${t} MATCH ? ORDER BY 2 LIMIT ?), ` +
          `edge(bm25, whole) AS (SELECT CASE WHEN count(*) < ? THEN 1e308 ELSE max(bm25) END, count(*) < ? FROM w) ` +
          `SELECT i.rowid, i.time_us, i.importance, w.bm25, edge.whole FROM edge CROSS JOIN w CROSS JOIN memory_index i${w.covered ? ' INDEXED BY memory_index_rank' : ''} ON i.rowid = w.id ` +
          `WHERE w.bm25 < edge.bm25 AND ${w.sql} ORDER BY w.bm25, i.time_us DESC, i.rowid DESC LIMIT ?`,
      )
      .all(ftsQuery, size, size, size, ...w.params, limit);
    if (rows.length < limit && !(rows[0]?.whole ?? 0)) return null;
    return rows.map(({ whole: _w, ...hit }) => hit);
  }

  /** Full rows by rowid, in the order asked (rowids no longer indexed are left out). */
  rows(rowids: readonly number[]): IndexRow[] {
    if (rowids.length === 0) return [];
    const found = this.db.query<IndexRow, number[]>(`SELECT * FROM memory_index WHERE rowid IN (${rowids.map(() => '?').join(', ')})`).all(...rowids);
    const byId = new Map(found.map((r) => [r.rowid, r]));
    return rowids.flatMap((id) => byId.get(id) ?? []);
  }

  /** Moves every change out of SQLite's own WAL into the main file and truncates the WAL (after a purge). */
  checkpoint(): void {
    this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  }

  private removeRow(rowid: number, content: string): void {
    for (const t of FTS_TABLES) this.db.query(`INSERT INTO ${t} (${t}, rowid, content) VALUES ('delete', ?, ?)`).run(rowid, content);
    this.db.query('DELETE FROM memory_index WHERE rowid = ?').run(rowid);
  }
}

/** The window of matchWindow: this many times the matches asked for, and at least WINDOW_MIN. */
const WINDOW_FACTOR = 4;
const WINDOW_MIN = 4000;

/** Filter fields that nearly every memory passes (one organization, not expired): matchWindow pays off. */
const ORG_WIDE_FIELDS = new Set(['orgId', 'aliveAtUs', 'latestOnly']);

/** True when `f` sets nothing but ORG_WIDE_FIELDS (undefined and empty lists or maps set nothing). */
function orgWide(f: MemoryFilter): boolean {
  return Object.entries(f).every(([k, v]) => ORG_WIDE_FIELDS.has(k) || v === undefined || (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && v !== null && Object.keys(v).length === 0));
}

/** The WHERE conditions of a filter over `memory_index i`. */
interface Where {
  sql: string;
  params: Param[];
  /** Every column the conditions read is in memory_index_rank. */
  covered: boolean;
}

/** Columns of memory_index held by the memory_index_rank index (memory-db.ts, migration 3). */
const RANK_COLUMNS = new Set(['org_id', 'agent_id', 'session_id', 'memory_type', 'time_us', 'importance', 'expires_us']);

/** The WHERE conditions of a filter over `memory_index i`, with their parameters. */
function whereOf(f: MemoryFilter): Where {
  const c: string[] = ['i.org_id = ?'];
  const p: Param[] = [f.orgId];
  const eq = (col: string, v: string | undefined) => {
    if (v === undefined) return;
    c.push(`i.${col} = ?`);
    p.push(v);
  };
  const among = (col: string, vs: readonly string[] | undefined, not = false) => {
    if (!vs?.length) return;
    c.push(`i.${col} ${not ? 'NOT ' : ''}IN (${vs.map(() => '?').join(', ')})`);
    p.push(...vs);
  };
  eq('memory_id', f.memoryId);
  eq('agent_id', f.agentId);
  eq('session_id', f.sessionId);
  eq('parent_id', f.parentId);
  among('memory_type', f.memoryTypes);
  among('memory_type', f.excludeTypes, true);
  among('event_type', f.eventTypes);
  among('dedup_key', f.dedupKeys);
  among('memory_id', f.excludeIds, true);
  for (const tag of f.tags ?? []) {
    c.push('instr(i.tags, ?) > 0');
    p.push(`,${tag},`);
  }
  if (f.contentContains !== undefined) {
    c.push('instr(lower(i.content), lower(?)) > 0');
    p.push(f.contentContains);
  }
  const bound = (expr: string, v: number | undefined) => {
    if (v === undefined) return;
    c.push(expr);
    p.push(v);
  };
  bound('i.importance >= ?', f.minImportance);
  bound('i.importance <= ?', f.maxImportance);
  bound('i.time_us >= ?', f.sinceUs);
  bound('i.time_us <= ?', f.untilUs);
  bound('(i.expires_us = 0 OR i.expires_us > ?)', f.aliveAtUs);
  for (const [key, value] of Object.entries(f.metadata ?? {})) {
    const path = `$."${key}"`;
    if (typeof value === 'boolean') {
      c.push(`json_type(nullif(i.metadata, ''), ?) = ?`);
      p.push(path, String(value));
      continue;
    }
    c.push(`json_type(nullif(i.metadata, ''), ?) = ? AND json_extract(nullif(i.metadata, ''), ?) = ?`);
    p.push(path, typeof value === 'string' ? 'text' : Number.isInteger(value) ? 'integer' : 'real', path, value);
  }
  const sql = c.join(' AND ');
  return { sql, params: p, covered: [...sql.matchAll(/\bi\.(\w+)/g)].every((m) => RANK_COLUMNS.has(m[1]!)) };
}

/**
 * The full-text index kept in step with storage. Every create, patch, forget and purge updates it
 * as part of the operation; at start (and after a failed attempt, at the next search) it catches up
 * with storage, which stays the source of truth: memories missing or older in the index are loaded,
 * memories gone from storage or forgotten are removed. Searches wait for the first catch-up, so a
 * missing or stale index never gives an incomplete answer.
 */
import { messageOf } from '../lib/errors.ts';
import type { Logger } from '../observability/index.ts';
import { decodeTags, fromRow, SELECT_COLUMNS, toStored, type Memory } from './memory-record.ts';
import { MEMORY_TABLE } from './memory-sql.ts';
import { isoMicros, sqlString, sqlStringList, sqlTime } from './sql.ts';
import type { StorageClient } from './storage-client.ts';
import type { IndexRow, MemoryIndexStore } from './store/memory-index-store.ts';
import type { Tombstones } from './tombstones.ts';
import type { VersionState } from './version-state.ts';

/** Memories loaded from storage per query while catching up. */
const CATCH_UP_CHUNK = 2000;
/** Past this many missing memories, storage is read whole in keyset pages instead of by id. */
const FULL_SCAN_FROM = 20_000;
const PAGE = 20_000;

/** The search index and its catch-up with storage. */
export class MemoryIndex {
  private caughtUp: Promise<void> | null = null;

  constructor(
    readonly store: MemoryIndexStore,
    private readonly storage: StorageClient,
    private readonly tombstones: Tombstones,
    private readonly versions: VersionState,
    private readonly logger: Logger,
  ) {}

  /** Resolves once the index has caught up with storage (starting a catch-up when none ran or the last failed). */
  ready(): Promise<void> {
    if (!this.caughtUp) {
      const run = this.catchUp();
      this.caughtUp = run;
      run.catch((err) => {
        if (this.caughtUp === run) this.caughtUp = null;
        this.logger.warn('cannot bring the memory search index up to date; retrying at the next search', { error: messageOf(err) });
      });
    }
    return this.caughtUp;
  }

  private async catchUp(): Promise<void> {
    const started = performance.now();
    // Indexed before storage is asked: a memory written meanwhile is in neither snapshot or in both, never removed by mistake.
    const indexed = this.store.versions();
    // Tombstones too: one whose memory has no row in storage any more (retention removed it) hides
    // nothing and goes; one added meanwhile is for a memory already stored, so it is never taken.
    const tombstoned = this.tombstones.snapshot();
    await this.versions.any(); // upgrades an old storage layout first
    const stored = await this.storage.query(`SELECT memory_id, max(coalesce(version, 1)) AS version FROM ${MEMORY_TABLE} WHERE org_id <> '' GROUP BY memory_id`);
    const live = new Set<string>();
    const load: string[] = [];
    for (const r of stored) {
      const id = String(r.memory_id);
      tombstoned.delete(id);
      if (this.tombstones.has(id)) continue;
      live.add(id);
      if ((indexed.get(id) ?? 0) < Number(r.version)) load.push(id);
    }
    this.tombstones.remove([...tombstoned]);
    const gone = [...indexed.keys()].filter((id) => !live.has(id));
    this.store.remove(gone);
    // Every version comes back; the index keeps the newest (upsert never replaces a newer one).
    // A memory forgotten while this ran stays out.
    const keep = (rows: Record<string, unknown>[], wanted?: Set<string>) =>
      this.store.upsert(rows.map((r) => toStored(fromRow(r))).filter((m) => (!wanted || wanted.has(m.memory_id)) && !this.tombstones.has(m.memory_id)));
    if (load.length >= FULL_SCAN_FROM) await this.scanAll(new Set(load), keep);
    else
      for (let i = 0; i < load.length; i += CATCH_UP_CHUNK) {
        const ids = load.slice(i, i + CATCH_UP_CHUNK);
        keep(await this.storage.query(`SELECT ${SELECT_COLUMNS} FROM ${MEMORY_TABLE} WHERE memory_id IN (${sqlStringList(ids)})`));
      }
    if (load.length > 0 || gone.length > 0 || tombstoned.size > 0)
      this.logger.info('memory search index caught up with storage', { loaded: load.length, removed: gone.length, tombstones_dropped: tombstoned.size, ms: Math.round(performance.now() - started) });
  }

  /** Reads every stored row in (time, memory_id) keyset pages, handing each page to `keep`. */
  private async scanAll(wanted: Set<string>, keep: (rows: Record<string, unknown>[], wanted: Set<string>) => void): Promise<void> {
    let after = '';
    for (;;) {
      const rows = await this.storage.query(`SELECT ${SELECT_COLUMNS} FROM ${MEMORY_TABLE} WHERE org_id <> ''${after} ORDER BY time, memory_id, coalesce(version, 1) LIMIT ${PAGE}`);
      if (rows.length === 0) return;
      keep(rows, wanted);
      if (rows.length < PAGE) return;
      const last = rows[rows.length - 1]!;
      const t = sqlTime(Number(last.time_us));
      const id = sqlString(String(last.memory_id));
      const v = Number(last.version);
      after = ` AND (time > ${t} OR (time = ${t} AND (memory_id > ${id} OR (memory_id = ${id} AND coalesce(version, 1) > ${v}))))`;
    }
  }
}

/** A memory from its index row. */
export function fromIndexRow(r: IndexRow): Memory {
  return {
    memory_id: r.memory_id,
    time: isoMicros(r.time_us),
    org_id: r.org_id,
    agent_id: r.agent_id,
    session_id: r.session_id || null,
    memory_type: r.memory_type,
    event_type: r.event_type,
    content: r.content,
    metadata: r.metadata ? (JSON.parse(r.metadata) as Record<string, unknown>) : null,
    tags: decodeTags(r.tags),
    importance: r.importance,
    dedup_key: r.dedup_key,
    parent_id: r.parent_id || null,
    version: r.version,
    updated_at: isoMicros(r.updated_us),
    expires_at: r.expires_us > 0 ? isoMicros(r.expires_us) : null,
  };
}
